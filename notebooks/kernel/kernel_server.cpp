#include "kernel_server.hpp"

#include <signal.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <string>
#include <utility>

#include <xeus/xzmq_serializer.hpp>
#include <zmq.hpp>
#include <zmq_addon.hpp>

namespace xenc_kernel {

namespace {
KernelServer* g_server = nullptr;

// Drops a SIGINT that arrived while the kernel was idle (SIGINT is blocked in every thread but
// while a cell's code runs, so it waits as pending): an Interrupt of an idle kernel, or one sent
// before the kernel took the request it serves next, which must not end that request's cell.
void discard_pending_interrupt() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  timespec zero{0, 0};
  while (sigtimedwait(&set, nullptr, &zero) == SIGINT) {
  }
}
}  // namespace

KernelServer* kernel_server() { return g_server; }

std::unique_ptr<xeus::xserver> make_kernel_server(xeus::xcontext& context,
                                                  const xeus::xconfiguration& config,
                                                  nl::json::error_handler_t eh) {
  auto server =
      std::make_unique<KernelServer>(context.get_wrapped_context<zmq::context_t>(), config, eh);
  g_server = server.get();
  return server;
}

void KernelServer::hold_queued_requests() {
  for (;;) {
    zmq::multipart_t wire;
    if (!wire.recv(m_shell, ZMQ_DONTWAIT)) return;
    try {
      xeus::xmessage message = xeus::xzmq_serializer::deserialize(wire, *p_auth);
      const bool execute = message.header().value("msg_type", "") == "execute_request";
      held_.push_back({std::move(message), execute});
    } catch (const std::exception& e) {
      std::cerr << "xenc-kernel: a request that cannot be read was dropped: " << e.what() << "\n";
    }
  }
}

// As xeus::xserver_zmq::start_impl, with serve_once for its poll.
void KernelServer::start_impl(xeus::xpub_message message) {
  start_publisher_thread();
  start_heartbeat_thread();
  m_request_stop = false;
  publish(std::move(message), xeus::channel::SHELL);
  while (!m_request_stop) serve_once();
  stop_channels();
  std::exit(0);
}

// One round of xeus::xserver_zmq::poll: a control request first, then one shell request, the
// held ones before those still on the socket. With requests held, it does not wait.
void KernelServer::serve_once() {
  zmq::pollitem_t items[] = {{m_controller, 0, ZMQ_POLLIN, 0}, {m_shell, 0, ZMQ_POLLIN, 0}};
  const bool holding = !held_.empty();
  zmq::poll(&items[0], holding ? 1 : 2, std::chrono::milliseconds(holding ? 0 : -1));
  try {
    if (items[0].revents & ZMQ_POLLIN) {
      zmq::multipart_t wire;
      wire.recv(m_controller);
      notify_control_listener(xeus::xzmq_serializer::deserialize(wire, *p_auth));
    }
    if (m_request_stop) return;
    if (holding) {
      Held next = std::move(held_.front());
      held_.pop_front();
      serving_held_execute_ = next.execute;
      discard_pending_interrupt();
      notify_shell_listener(std::move(next.message));
      serving_held_execute_ = false;
    } else if (items[1].revents & ZMQ_POLLIN) {
      zmq::multipart_t wire;
      wire.recv(m_shell);
      // before xeus publishes the request's busy status: an Interrupt sent after the client saw
      // it is this request's
      discard_pending_interrupt();
      notify_shell_listener(xeus::xzmq_serializer::deserialize(wire, *p_auth));
    }
  } catch (const std::exception& e) {
    serving_held_execute_ = false;
    std::cerr << "xenc-kernel: " << e.what() << std::endl;
  }
}

void KernelServer::send_stdin_impl(xeus::xmessage message) {
  const std::string id = message.header().value("msg_id", "");
  // a reply already waiting is an earlier request's (typed into a box an Interrupt left open)
  for (zmq::multipart_t stale; stale.recv(m_stdin, ZMQ_DONTWAIT); stale.clear()) {
  }
  xeus::xzmq_serializer::serialize(std::move(message), *p_auth, m_error_handler).send(m_stdin);
  for (;;) {
    zmq::pollitem_t item = {m_stdin, 0, ZMQ_POLLIN, 0};
    try {
      zmq::poll(&item, 1, std::chrono::milliseconds(100));
    } catch (const zmq::error_t& e) {
      if (e.num() != EINTR) throw;
      item.revents = 0;  // the Interrupt's signal: looked at below
    }
    if (input_cancelled_ && input_cancelled_()) throw InputCancelled();
    if ((item.revents & ZMQ_POLLIN) == 0) continue;
    zmq::multipart_t wire;
    wire.recv(m_stdin);
    xeus::xmessage reply = xeus::xzmq_serializer::deserialize(wire, *p_auth);
    // a reply that names its request must name this one (jupyter_client's names none)
    const std::string answers = reply.parent_header().value("msg_id", "");
    if (!answers.empty() && answers != id) continue;
    notify_stdin_listener(std::move(reply));
    return;
  }
}

}  // namespace xenc_kernel
