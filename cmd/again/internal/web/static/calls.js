// The worker that runs the Go code (worker.js and again.wasm), and the one
// way to call it.
import { t } from './i18n.js';

const worker = new Worker('worker.js');
let seq = 0;
const pending = new Map(); // by call id: the promise's resolve and reject

worker.onmessage = (e) => {
  const c = pending.get(e.data.id);
  pending.delete(e.data.id);
  if (e.data.error !== undefined) c.reject(new Error(e.data.error));
  else c.resolve(e.data.result);
};
worker.onerror = (e) => {
  for (const c of pending.values()) c.reject(new Error(e.message || t('js.workerFailed')));
  pending.clear();
};

// call runs a Go function in the worker and resolves to its JSON text.
export function call(fn, ...args) {
  return new Promise((resolve, reject) => {
    const id = ++seq;
    pending.set(id, { resolve, reject });
    worker.postMessage({ id, fn, args });
  });
}
globalThis.againCall = call; // for the browser tests
