// The only module that touches the wasm Module. Every widget on a page shares one engine instance.
// Usage: const engine = await getEngine(); engine.call('training_cost', {...}) -> result object,
// or throws TallyError { field, message } for bad input (never NaN, never a wasm abort).

/** An input the engine rejected; `field` is the argument at fault (e.g. "mfu"). */
export class TallyError extends Error {
  constructor(field, message) {
    super(message);
    this.name = 'TallyError';
    this.field = field;
  }
}

/**
 * The engine's two files, beside this module: each URL is a literal `new URL('./…', import.meta.url)`, so a
 * bundler (Vite, webpack 5) sees the files, emits them with the bundle and rewrites the URLs.
 */
export function engineFiles() {
  return { glue: new URL('./tally.js', import.meta.url).href, wasm: new URL('./tally.wasm', import.meta.url).href };
}

function loadClassicScript(src) {
  return new Promise((resolve, reject) => {
    const script = document.createElement('script');
    script.src = src;
    script.async = true;
    script.onload = resolve;
    script.onerror = () => reject(new Error(`could not load ${src}`));
    document.head.append(script);
  });
}

// Methods whose answer never changes for a loaded engine (preset tables, the kernel list, format
// tables): asked by several widgets, computed once per page. Cached answers are frozen, since every
// caller shares them.
const CONSTANT_METHODS = new Set(['presets', 'gemm_kernels', 'float_formats', 'recipes']);

// Calls remembered by name: enough for any one interaction the tests check, bounded for a long session.
export const RECENT_CALLS = 1000;

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

  /** Calls an engine API method; returns its result or throws TallyError. */
  call(method, args = {}) {
    const argsText = JSON.stringify(args);
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

let enginePromise = null;

/** The shared engine (loaded once per page, on first use). */
export function getEngine() {
  if (!enginePromise) {
    enginePromise = (async () => {
      const files = engineFiles();
      if (typeof globalThis.createTallyModule !== 'function') await loadClassicScript(files.glue);
      const module = await globalThis.createTallyModule({
        locateFile: (file) => (file.endsWith('.wasm') ? files.wasm : new URL(file, files.glue).href),
      });
      return new Engine(module);
    })();
  }
  return enginePromise;
}
