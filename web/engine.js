// The only module that touches the wasm Module. Every widget on a page shares one engine instance. The one
// exception is web/widgets/roofline-worker.js: a classic worker (importScripts cannot load this ES module) with its
// own engine instance off the main thread, checked by tests/node/engine-boundary.test.mjs.
// Usage: const engine = await getEngine(); engine.call('training_cost', {...}) -> result object,
// or throws TallyError { field, message } for bad input (never NaN, never a wasm abort). NaN, ±Infinity and
// undefined are refused here, before the wasm, naming the argument: JSON has no way to carry them.

/** An input the engine rejected; `field` is the argument at fault (e.g. "mfu"). */
export class TallyError extends Error {
  constructor(field, message) {
    super(message);
    this.name = 'TallyError';
    this.field = field;
  }
}

/**
 * The engine's files beside this module: tally.wasm, and tally.js (Emscripten's glue as a classic script, which the
 * roofline's workers importScripts). Each URL is a literal `new URL('./…', import.meta.url)`, so a bundler (Vite,
 * webpack 5, Rspack, Turbopack) sees the file, emits it with the bundle and rewrites the URL.
 */
export function engineFiles() {
  return {
    glue: absoluteUrl(new URL('./tally.js', import.meta.url)),
    wasm: absoluteUrl(new URL('./tally.wasm', import.meta.url)),
  };
}

/**
 * `url`'s href made absolute: Turbopack (Next.js) turns `new URL('./…', import.meta.url)` into an object whose href is
 * a path with no origin, which a blob: worker could not resolve. Resolved against the page's own address (always a
 * valid base in a browser; where there is none the href is kept as it is).
 */
export function absoluteUrl(url) {
  const href = String(url?.href ?? url);
  try {
    return new URL(href).href;
  } catch {
    try {
      return new URL(href, globalThis.location?.href).href;
    } catch {
      return href;
    }
  }
}

/**
 * Emscripten's factory. The page imports it as an ES module (tally-module.js, scripts/build/engine-module.mjs), which
 * every bundler follows; `globalThis.createTallyModule`, where set first, takes its place: the classic script and
 * the single file set it with the wasm bytes inside, and the node tests with an engine of their own.
 */
async function engineFactory() {
  if (typeof globalThis.createTallyModule === 'function') return globalThis.createTallyModule;
  const factory = (await import('./tally-module.js')).default;
  // Published under the name tally.js as a classic script always gave it, and read back: a test or profiler that
  // watches engine calls (tests/browser/page-helpers.mjs wrapEngineCalls) defines that property before any script
  // runs and hands back its wrapper. A property of globalThis, so no bundler renames it.
  globalThis.createTallyModule = factory;
  return globalThis.createTallyModule;
}

// Methods whose answer never changes for a loaded engine (preset tables, the kernel list, format
// tables): asked by several widgets, computed once per page. Cached answers are frozen, since every
// caller shares them.
const CONSTANT_METHODS = new Set(['presets', 'gemm_kernels', 'float_formats', 'recipes']);

// Calls remembered by name: enough for any one interaction the tests check, bounded for a long session.
export const RECENT_CALLS = 1000;

/**
 * The first value inside `args` that JSON cannot carry (NaN, Infinity, -Infinity, undefined: JSON.stringify would
 * send null or drop the key, and the engine would quietly take the default), as { where, value }; null when there
 * is none. `where` names the argument first: "mfu", "values[3]", "model.layers". Walked without recursion, so a
 * deeply nested argument cannot overflow the stack; an object met again (shared, or a cycle) is not walked twice.
 */
function firstUnsendable(args) {
  const pending = Object.entries(args).reverse();
  const seen = new Set();
  while (pending.length) {
    const [where, value] = pending.pop();
    if (value === undefined || (typeof value === 'number' && !Number.isFinite(value))) return { where, value };
    if (value === null || typeof value !== 'object' || seen.has(value)) continue;
    seen.add(value);
    if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--) pending.push([`${where}[${i}]`, value[i]]);
    } else if (typeof value.toJSON !== 'function') {
      const entries = Object.entries(value);
      for (let i = entries.length - 1; i >= 0; i--) pending.push([`${where}.${entries[i][0]}`, entries[i][1]]);
    }
  }
  return null;
}

/** `args` as JSON text, or TallyError naming the argument that JSON cannot carry; nothing reaches the wasm first. */
function argsJson(args) {
  const bad = args !== null && typeof args === 'object' ? firstUnsendable(args) : null;
  if (bad !== null) {
    const field = bad.where.split(/[.[]/)[0];
    throw new TallyError(
      field,
      bad.value === undefined
        ? `${bad.where} is undefined: give it a value, or leave it out for the default`
        : `${bad.where} is ${bad.value}, which JSON cannot carry: give a finite number`,
    );
  }
  try {
    return JSON.stringify(args);
  } catch (error) {
    // A cycle or a BigInt.
    throw new TallyError('args', `the arguments cannot be written as JSON: ${error.message}`);
  }
}

function deepFreeze(value) {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const item of Object.values(value)) deepFreeze(item);
  }
  return value;
}

class Engine {
  constructor(module) {
    this.module = module;
    this.constants = new Map();
    /** How many calls reached the wasm engine (cache hits excluded): the page's call count. */
    this.engineCallCount = 0;
    /** The last RECENT_CALLS methods that reached the engine, oldest first: a page open for hours keeps no more. */
    this.recentCalls = [];
  }

  /**
   * Methods that reached the engine after the first `count` calls (a value of engineCallCount read earlier),
   * in order; throws when the recent window no longer holds all of them.
   */
  engineCallsSince(count) {
    const missed = this.engineCallCount - this.recentCalls.length;
    if (!Number.isInteger(count) || count < missed || count > this.engineCallCount)
      throw new RangeError(
        `engineCallsSince: count must be a whole number in [${missed}, ${this.engineCallCount}] (the last ${RECENT_CALLS} calls are kept), got ${count}`,
      );
    return this.recentCalls.slice(count - missed);
  }

  /**
   * Calls an engine API method; returns its result or throws TallyError. A NaN, ±Infinity or undefined anywhere
   * in `args` is refused here, naming its argument, before the wasm is called (JSON would turn it into null or
   * drop it, and the engine would run with the default).
   */
  call(method, args = {}) {
    const argsText = argsJson(args);
    const constant = CONSTANT_METHODS.has(method);
    const key = `${method}\u0000${argsText}`;
    if (constant && this.constants.has(key)) return this.constants.get(key);
    this.engineCallCount += 1;
    this.recentCalls.push(method);
    if (this.recentCalls.length > RECENT_CALLS) this.recentCalls.shift();
    let envelope;
    try {
      envelope = JSON.parse(this.module.tally_call(String(method), argsText));
    } catch (error) {
      // Whatever went wrong below the API (a trap, unparsable reply) reaches widgets as an input error to show.
      throw new TallyError('', `the engine could not answer ${method}: ${error.message}`);
    }
    if (!envelope.ok)
      throw new TallyError(envelope.error?.field ?? '', envelope.error?.message ?? 'the engine refused this input');
    if (constant) this.constants.set(key, deepFreeze(envelope.result));
    return envelope.result;
  }

  /** [{name, summary}] of every API method. */
  methods() {
    return JSON.parse(this.module.tally_methods());
  }

  /** Current size of the wasm heap in bytes (the leak check watches it). */
  heapBytes() {
    return this.module.HEAPU8.length;
  }
}

/** Where a host's Content-Security-Policy recipe is (the widget's message names it). */
export const CSP_RECIPE = "tally's docs/EMBEDDING.md, section “A host page's Content-Security-Policy”";

/**
 * Why the engine could not load, in the host author's terms: the CSP directive the page lacks where the browser
 * reported one (a `securitypolicyviolation` seen while loading) or the error says so; else the error itself.
 */
export function engineLoadMessage(error, violations = []) {
  const text = String(error?.message ?? error);
  const origin = (url) => {
    try {
      return new URL(url).origin;
    } catch {
      return url;
    }
  };
  const wasmEval = violations.find((v) => v.blocked === 'wasm-eval' || v.blocked === 'eval');
  if (wasmEval || /Content Security Policy|unsafe-eval/i.test(text))
    return `this page's Content-Security-Policy does not let the browser compile WebAssembly: its script-src needs 'wasm-unsafe-eval' (${CSP_RECIPE})`;
  const blocked = violations.find((v) => /^(script-src|script-src-elem|connect-src|default-src)$/.test(v.directive));
  if (blocked) {
    const directive = blocked.directive === 'script-src-elem' ? 'script-src' : blocked.directive;
    const what = directive === 'connect-src' ? 'fetching tally.wasm' : "the engine's script";
    return `this page's Content-Security-Policy blocks ${what} from ${origin(blocked.blocked)}: add ${origin(blocked.blocked)} to its ${directive} (${CSP_RECIPE})`;
  }
  return text;
}

let enginePromise = null;

/** The shared engine (loaded once per page, on first use); rejects with engineLoadMessage's reason. */
export function getEngine() {
  if (!enginePromise) {
    enginePromise = (async () => {
      const files = engineFiles();
      // The host page's CSP refusals while the engine loads, to name the directive if loading fails.
      const violations = [];
      const seen = (event) => violations.push({ directive: event.effectiveDirective, blocked: event.blockedURI });
      globalThis.document?.addEventListener('securitypolicyviolation', seen);
      try {
        const createTallyModule = await engineFactory();
        // The glue asks only for tally.wasm; any other name is left as it is (never resolved against a base that a
        // bundler may have made relative).
        const module = await createTallyModule({ locateFile: (file) => (file.endsWith('.wasm') ? files.wasm : file) });
        return new Engine(module);
      } catch (error) {
        // A refusal is reported as an event queued beside the failure: let it arrive first.
        await new Promise((resolve) => setTimeout(resolve));
        throw new Error(engineLoadMessage(error, violations));
      } finally {
        globalThis.document?.removeEventListener('securitypolicyviolation', seen);
      }
    })();
  }
  return enginePromise;
}
