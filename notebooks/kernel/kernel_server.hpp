// xenc-kernel's ZeroMQ server: xeus's own (xeus::xserver_zmq), with one change in what happens
// to the requests that wait behind a cell that failed.
//
// xeus 2.4, after sending the error reply of a cell (an Interrupt is one), "aborts" the requests
// waiting on the shell socket at that moment: each gets a bare {"status": "error"} reply, with no
// busy or idle status and no error message on IOPub. A client that waits for the idle status of
// its request (jupyter_client, nbclient, the notebook page) then waits for ever, and the kernel
// sits idle in its poll. Worse, "waiting at that moment" includes a request the client sent
// *after* it received the error reply: the kernel sends the reply, the kernel's process is
// descheduled (two other kernels computing beside it are enough), the client sends its next cell,
// and only then does xeus look at the socket. That was the hang after an Interrupt under load.
//
// Here the requests that wait behind a failed cell are taken off the socket when the cell's error
// reply is decided, *before* it is sent (hold_queued_requests): nothing the client sent after
// seeing the error can be among them. They are then served in order, each through the normal
// path (busy, its reply, idle), with execute requests flagged so that the interpreter answers
// them with a "did not run" error instead of running them (queued_behind_error). xeus's own abort
// is switched off.
#pragma once

#include <deque>
#include <functional>
#include <memory>
#include <stdexcept>

#include <xeus/xkernel.hpp>
#include <xeus/xmessage.hpp>
#include <xeus/xserver_zmq.hpp>

namespace xenc_kernel {

class KernelServer : public xeus::xserver_zmq {
 public:
  using xeus::xserver_zmq::xserver_zmq;

  /// Takes every request waiting on the shell socket now into the held queue, served before any
  /// later one; execute requests among them will be answered "did not run". Call it when a
  /// cell's reply is an error, before the reply is sent.
  void hold_queued_requests();
  /// Whether the request being served now is an execute request held behind a failed cell.
  bool queued_behind_error() const { return serving_held_execute_; }
  /// While a cell waits for the notebook's answer to an input request (std::cin), the wait ends
  /// as soon as `cancelled` returns true (an Interrupt), by throwing InputCancelled.
  void set_input_cancelled(std::function<bool()> cancelled) {
    input_cancelled_ = std::move(cancelled);
  }

 protected:
  void start_impl(xeus::xpub_message message) override;
  /// xeus calls this after an error reply; the held queue replaces it (see above).
  void abort_queue_impl(const listener&, long) override {}
  /// As xeus's (send the input request, wait for its reply), but the wait polls, so that an
  /// Interrupt ends it (input_cancelled_) without a jump out of ZeroMQ, and a reply to an earlier
  /// request (typed into a box that an Interrupt left on the page) is dropped, not taken as this
  /// one's: those waiting when the request is sent, and those that name another request.
  void send_stdin_impl(xeus::xmessage message) override;

 private:
  void serve_once();

  struct Held {
    xeus::xmessage message;
    bool execute;
  };
  std::deque<Held> held_;
  bool serving_held_execute_ = false;
  std::function<bool()> input_cancelled_;
};

/// Thrown by the input request's wait when an Interrupt ends it (KernelServer::send_stdin_impl).
struct InputCancelled : std::runtime_error {
  InputCancelled() : std::runtime_error("the wait for input was interrupted") {}
};

/// The server builder for xeus::xkernel (the kernel's single KernelServer is kernel_server()).
std::unique_ptr<xeus::xserver> make_kernel_server(xeus::xcontext& context,
                                                  const xeus::xconfiguration& config,
                                                  nl::json::error_handler_t eh);
/// The running kernel's server, or null before make_kernel_server.
KernelServer* kernel_server();

}  // namespace xenc_kernel
