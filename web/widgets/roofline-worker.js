// Web Worker of <tally-roofline>: measures this machine with its own engine instance, off the main
// thread, so the page stays responsive. A classic worker (importScripts), single-threaded: the page is
// not cross-origin isolated (no COOP/COEP headers), so wasm threads are not available; the widget runs
// one such worker per core instead, each computing its own stripe of C with its own copy of B.
//
// Where relaxed SIMD validates, the worker also instantiates tally-relaxed.wasm (engine/kernels/relaxed/) on the
// engine's memory, which makes the engine's simd-relaxed kernel and probe_peak {variant: "relaxed"} work.
//
// Embedded on another origin, or inlined by a bundler, the widget starts this script from a blob: worker of the
// host page's origin that sets self.tallyFiles ({glue, wasm, relaxed}: the engine's URLs) and importScripts this
// file; the engine files are then fetched across origins, which the server allows (Access-Control-Allow-Origin: *).
//
// Protocol
//   worker -> main  {type: 'ready', relaxed: bool, relaxedNote}   engine (and relaxed module) loaded
//                   {type: 'failed', message}                      the engine could not load
//   main -> worker  {type: 'call', id, method, args}
//   worker -> main  {type: 'result', id, result} | {type: 'error', id, field, message}
// Cancelling is worker.terminate() from the page: it stops even in the middle of a kernel.
//
// The one file besides web/engine.js that calls the wasm module (tally_call): a classic worker cannot import
// engine.js, an ES module, and it stays classic so that a blob: worker of another origin importScripts it and the
// glue without CORS (roofline-bench.js startWorker).
/* global createTallyModule, importScripts */
// The engine's files: as the page named them (blob: worker), else at the site root above this script.
const files =
  self.tallyFiles ??
  Object.fromEntries(
    Object.entries({ glue: 'tally.js', wasm: 'tally.wasm', relaxed: 'tally-relaxed.wasm' }).map(([k, f]) => [
      k,
      new URL(`../${f}`, self.location.href).href,
    ]),
  );
// A page that requires Trusted Types passes that on to its blob: workers: the glue's URL goes through tally's policy
// (the blob: starter made it as self.tallyPolicy; web/widgets/kit/trusted.js on the page).
const policy =
  self.tallyPolicy ??
  (() => {
    try {
      return self.trustedTypes?.createPolicy('tally', { createScriptURL: (url) => url }) ?? null;
    } catch {
      return null;
    }
  })();
importScripts(policy ? policy.createScriptURL(files.glue) : files.glue);

// The relaxed-SIMD module's bytes, compiled only if this browser validates its final-encoding opcodes.
async function relaxedModule() {
  try {
    const response = await fetch(files.relaxed);
    if (!response.ok) return { module: null, note: `tally-relaxed.wasm not served (HTTP ${response.status})` };
    const bytes = new Uint8Array(await response.arrayBuffer());
    if (!WebAssembly.validate(bytes))
      return { module: null, note: 'this browser does not validate relaxed SIMD (f32x4.relaxed_madd)' };
    return { module: await WebAssembly.compile(bytes), note: 'f32x4.relaxed_madd validated' };
  } catch (error) {
    return { module: null, note: `tally-relaxed.wasm could not load: ${error}` };
  }
}

const ready = Promise.all([
  createTallyModule({
    locateFile: (file) => (file.endsWith('.wasm') ? files.wasm : new URL(file, files.glue).href),
  }),
  relaxedModule(),
]).then(async ([engine, relaxed]) => {
  if (relaxed.module) {
    // Same linear memory as the engine: the kernel reads A and B and writes C where the engine put them.
    // (Emscripten minifies the export's name, so find it by type.)
    const memory = Object.values(engine.asm).find((value) => value instanceof WebAssembly.Memory);
    const instance = await WebAssembly.instantiate(relaxed.module, { env: { memory } });
    engine.tallyRelaxed = instance.exports;
  }
  return { engine, relaxed: Boolean(relaxed.module), relaxedNote: relaxed.note };
});

ready.then(
  ({ relaxed, relaxedNote }) => self.postMessage({ type: 'ready', relaxed, relaxedNote }),
  (error) => self.postMessage({ type: 'failed', message: `the engine could not load: ${error}` }),
);

self.onmessage = async (event) => {
  const message = event.data;
  if (!message || message.type !== 'call') return;
  const { id, method, args } = message;
  try {
    const { engine } = await ready;
    const envelope = JSON.parse(engine.tally_call(String(method), JSON.stringify(args ?? {})));
    if (envelope.ok) self.postMessage({ type: 'result', id, result: envelope.result });
    else self.postMessage({ type: 'error', id, field: envelope.error.field, message: envelope.error.message });
  } catch (error) {
    self.postMessage({ type: 'error', id, field: '', message: String(error?.message ?? error) });
  }
};
