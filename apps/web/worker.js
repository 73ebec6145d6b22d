// The training tab's Web Worker: loads its own copy of the library and trains the models
// (apps/train_order, through apps/web/bindings.cpp's trainOrder), posting the progress, the
// curves and the results to the page as it goes. The page stops a run with worker.terminate().
'use strict';
importScripts('xenc-web.js');

const library = XencWeb();

onmessage = async e => {
  const lib = await library;
  const out = lib.trainOrder(JSON.stringify(e.data), text => postMessage(JSON.parse(text)));
  postMessage({ type: 'done', result: JSON.parse(out) });
};
