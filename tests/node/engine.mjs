// Loads the built wasm engine in node for tests. Emscripten 3.1.6's loader cannot fetch a file
// path under node 20 ("Failed to parse URL"), so the bytes are handed over as wasmBinary.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const wasmDir = process.env.TALLY_WASM_DIR ?? path.join(root, 'build/wasm');
export const nativeCli = process.env.TALLY_CLI ?? path.join(root, 'build/native/tally');
export const siteDir = process.env.TALLY_SITE_DIR ?? path.join(root, 'build/site');

/** Every float format the engine encodes (engine/include/tally/numerics/precision.h), for tests that walk them all. */
export const FLOAT_FORMATS = [
  'fp64',
  'fp32',
  'tf32',
  'fp16',
  'bf16',
  'e4m3',
  'e5m2',
  'e4m3fnuz',
  'e5m2fnuz',
  'e2m3',
  'e3m2',
  'e2m1',
  'e8m0',
];

/** The text of a Hugging Face config.json fixture (tests/fixtures/hf/<name>.json, written from the published values). */
// The step chapter's planner example: Llama 3 70B on 64 H100s, 8,192-token sequences, 512 per optimizer step.
export const PLANNER_EXAMPLE = {
  model: 'llama-3-70b',
  hardware: 'h100-sxm',
  gpus: 64,
  seq: 8192,
  global_batch: 512,
  flash_attention: true,
};
export const hfFixture = (name) => readFileSync(path.join(root, 'tests/fixtures/hf', `${name}.json`), 'utf8');

let cached;

/** The raw Emscripten module (one per process). */
export async function loadModule() {
  if (!cached) {
    const require = createRequire(import.meta.url);
    const createTallyModule = require(path.join(wasmDir, 'tally.js'));
    cached = createTallyModule({ wasmBinary: readFileSync(path.join(wasmDir, 'tally.wasm')) });
  }
  return cached;
}

/** Runs one API method and unwraps its envelope; an error carries the engine's .field. */
function callEnvelope(module, method, args) {
  const envelope = JSON.parse(module.tally_call(method, JSON.stringify(args)));
  if (!envelope.ok) {
    const error = new Error(envelope.error.message);
    error.field = envelope.error.field;
    throw error;
  }
  return envelope.result;
}

/** { call(method, args) -> result, throws Error with .field; raw(method, argsJson) -> envelope text } */
export async function loadEngine() {
  const module = await loadModule();
  return {
    module,
    raw: (method, argsJson) => module.tally_call(method, argsJson),
    call: (method, args = {}) => callEnvelope(module, method, args),
  };
}

/** The native CLI's envelope for the same method and JSON text: `tally call METHOD JSON`. */
export function nativeCall(method, argsJson) {
  try {
    return execFileSync(nativeCli, ['call', method, argsJson], { encoding: 'utf8', maxBuffer: 1 << 28 }).trim();
  } catch (error) {
    if (error.status === 2) return error.stdout.trim();
    throw error;
  }
}

/**
 * Asserts that wasm and the native CLI give the same envelope text for every [method, args] case, errors included;
 * returns how many of them were error envelopes.
 */
export async function assertSameEnvelopes(cases) {
  const engine = await loadEngine();
  let errors = 0;
  for (const [method, args] of cases) {
    const text = JSON.stringify(args);
    const wasm = engine.raw(method, text);
    assert.equal(wasm, nativeCall(method, text), `${method} ${text.slice(0, 100)}`);
    if (!JSON.parse(wasm).ok) errors++;
  }
  return errors;
}

/** The native CLI's answer for the same method and arguments (the `result` of the envelope); throws on an error. */
export function native(method, args) {
  const envelope = JSON.parse(nativeCall(method, JSON.stringify(args)));
  if (!envelope.ok) throw new Error(`native ${method}: ${envelope.error.field}: ${envelope.error.message}`);
  return envelope.result;
}

/** Runs the native CLI with arguments and returns its stdout (throws on a non-zero exit). */
export function nativeRun(args) {
  return execFileSync(nativeCli, args, { encoding: 'utf8', maxBuffer: 1 << 28 });
}

/** The relaxed-SIMD module's bytes (engine/kernels/relaxed/, built beside tally.wasm). */
export function relaxedBytes() {
  return readFileSync(path.join(wasmDir, 'tally-relaxed.wasm'));
}

/**
 * A second engine instance with the relaxed-SIMD module attached on its memory, as the roofline worker
 * does (node 20's V8 needs --experimental-wasm-relaxed-simd, which the caller sets).
 */
export async function loadRelaxedEngine() {
  const require = createRequire(import.meta.url);
  const createTallyModule = require(path.join(wasmDir, 'tally.js'));
  const module = await createTallyModule({ wasmBinary: readFileSync(path.join(wasmDir, 'tally.wasm')) });
  const memory = Object.values(module.asm).find((value) => value instanceof WebAssembly.Memory);
  const { instance } = await WebAssembly.instantiate(relaxedBytes(), { env: { memory } });
  module.tallyRelaxed = instance.exports;
  return {
    module,
    call: (method, args = {}) => callEnvelope(module, method, args),
  };
}

let declarations;
/** `args` less the keys `method` does not declare (content/validation runs carry their sources' own figures). */
export function declaredOnly(method, args) {
  declarations ??= JSON.parse(nativeRun(['methods', '--json']));
  const names = new Set(declarations.find((m) => m.name === method).args.map((a) => a.name));
  return Object.fromEntries(Object.entries(args).filter(([key]) => names.has(key)));
}
