// The only module that touches the wasm Module. Every widget on a page shares one engine instance.
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
