// Web Worker of <tally-roofline>: measures this machine with its own engine instance, off the main
// thread, so the page stays responsive. A classic worker (importScripts), single-threaded: the page
// is not cross-origin isolated (no COOP/COEP headers), so wasm threads are not available.
//
// Protocol
//   main -> worker  {type: 'run', plan: [{method, args, label}, ...]}
//   worker -> main  {type: 'ready'}                         engine loaded
//                   {type: 'progress', step, total, label}  before each step
//                   {type: 'result', step, method, args, result}
//                   {type: 'done'} | {type: 'error', field, message}
// Cancelling is worker.terminate() from the page: it stops even in the middle of a kernel.
/* global createTallyModule, importScripts */
const siteRoot = new URL('../', self.location.href);
importScripts(new URL('tally.js', siteRoot).href);

const modulePromise = createTallyModule({ locateFile: (file) => new URL(file, siteRoot).href });

function call(module, method, args) {
  const envelope = JSON.parse(module.tally_call(String(method), JSON.stringify(args)));
  if (!envelope.ok) {
    const error = new Error(envelope.error.message);
    error.field = envelope.error.field;
    throw error;
  }
  return envelope.result;
}

modulePromise.then(
  () => self.postMessage({ type: 'ready' }),
  (error) => self.postMessage({ type: 'error', field: '', message: `the engine could not load: ${error}` }),
);

self.onmessage = async (event) => {
  const message = event.data;
  if (!message || message.type !== 'run') return;
  let module;
  try {
    module = await modulePromise;
  } catch (error) {
    self.postMessage({ type: 'error', field: '', message: `the engine could not load: ${error}` });
    return;
  }
  const plan = message.plan ?? [];
  for (let step = 0; step < plan.length; step += 1) {
    const { method, args, label } = plan[step];
    self.postMessage({ type: 'progress', step, total: plan.length, label });
    try {
      const result = call(module, method, args);
      self.postMessage({ type: 'result', step, method, args, result });
    } catch (error) {
      self.postMessage({ type: 'error', field: error.field ?? '', message: error.message });
      return;
    }
  }
  self.postMessage({ type: 'done' });
};
