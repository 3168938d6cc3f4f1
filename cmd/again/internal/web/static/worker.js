// The calculator's Web Worker: it runs again.wasm (the Go code, see
// web/wasm) off the page's main thread, so that a long computation (100,000
// retries, or 20,000 with decorrelated jitter) never blocks typing. The page
// posts {id, fn, args}; the worker answers {id, result} with the Go
// function's JSON text, or {id, error}. It makes no request but the two
// that load it.
'use strict';

importScripts('wasm_exec.js');

const ready = (async () => {
  const go = new self.Go();
  const started = new Promise((resolve) => { self.againReady = resolve; });
  let inst;
  try {
    inst = (await WebAssembly.instantiateStreaming(fetch('again.wasm'), go.importObject)).instance;
  } catch (e) {
    // Hosts that send .wasm with another Content-Type: compile from bytes.
    const bytes = await (await fetch('again.wasm')).arrayBuffer();
    inst = (await WebAssembly.instantiate(bytes, go.importObject)).instance;
  }
  go.run(inst);
  await started;
})();

const FUNCS = ['Compute', 'Solve', 'Export', 'Storm', 'Shed', 'Defaults'];

self.onmessage = async (e) => {
  const { id, fn, args } = e.data;
  try {
    await ready;
    if (!FUNCS.includes(fn)) throw new Error('no function ' + fn);
    self.postMessage({ id, result: self['again' + fn](...args) });
  } catch (err) {
    self.postMessage({ id, error: String(err) });
  }
};
