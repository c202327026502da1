// A bounded fuzz of the wasm entry point: 100,000 calls of tally_call with random and mutated method
// names and argument texts (malformed JSON with non-ASCII bytes, invalid UTF-8 where the binding
// passes bytes, deep nesting, extreme numbers, numbers as hex/inf/nan strings). Every call must return
// a parseable envelope, {ok:true,result} or {ok:false,error:{field,message}}, and afterwards the module
// must still answer a valid call with the same numbers as before. Deterministic (fixed seed).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadEngine } from './engine.mjs';

const CALLS = 100_000;
const engine = await loadEngine();
const methods = engine.call('methods').map((m) => m.name);
// Methods that measure this machine for seconds: they only get argument texts that cannot be valid.
const MEASURING = new Set(['gemm_bench', 'probe_peak', 'probe_bandwidth', 'gemm_run', 'float_encode_batch']);
const reference = { params: 70e9, tokens: 15e12, gpus: 1024, peak_tflops: 989.5, mfu: 0.5 };

function rng(seed) {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
}

const FIELDS = [
  'params',
  'tokens',
  'gpus',
  'mfu',
  'peak_tflops',
  'peak_flops_per_s',
  'dollars_per_gpu_hour',
  'model',
  'hf_config',
  'seq',
  'micro_batch',
  'zero',
  'tp',
  'pp',
  'hardware',
  'capacity_bytes',
  'context',
  'batch',
  'shape',
  'dtype',
  'format',
  'value',
  'hex',
  'values',
  'tokens_per_second',
  'intensity',
  'bandwidth_bytes_per_s',
  'recipe',
  'mode',
  'kernel',
  'n',
  'scheme',
  'block_size',
  'kind',
  'recompute',
  'flash_attention',
];
const NUMBERS = [
  0,
  -0,
  1,
  -1,
  0.5,
  1.5,
  7,
  8,
  2048,
  70e9,
  15e12,
  1e308,
  -1e308,
  1e-308,
  5e-324,
  2 ** 53,
  2 ** 63,
  1e300,
  1e-300,
  989.5,
  4096,
];
const STRINGS = [
  '',
  'llama-2-7b',
  'gpt2-small',
  'h100-sxm',
  'bf16',
  'e4m3',
  'fp8',
  '0x10',
  'inf',
  '-inf',
  'nan',
  '1e999',
  '1e-400',
  ' 8',
  '70e9',
  'é',
  '“quoted”',
  '\u001b[2J',
  '\u202e',
  'x'.repeat(5000),
  '\ud800',
  '\udfff',
  '{"model_type":"gpt2"',
  '{"model_type":"llama","hidden_size":4096}',
  'caf\u00e9',
  '\u0000',
  '\\',
];
const JUNK = [
  'é',
  '“',
  '”',
  '{',
  '}',
  '[',
  ']',
  '"',
  ':',
  ',',
  '\\',
  '\u0000',
  '\u001b',
  '\ud800',
  '\udc00',
  '\uffff',
  'e',
  '1',
  '-',
  '.',
  'x',
  ' ',
  '\n',
  '\u00ff',
  '\u0080',
];

function value(rand, depth) {
  const r = rand();
  if (r < 0.35) return NUMBERS[Math.floor(rand() * NUMBERS.length)];
  if (r < 0.7) return STRINGS[Math.floor(rand() * STRINGS.length)];
  if (r < 0.78) return rand() < 0.5;
  if (r < 0.82) return null;
  if (depth > 3) return 1;
  if (r < 0.91) return Array.from({ length: Math.floor(rand() * 5) }, () => value(rand, depth + 1));
  return object(rand, depth + 1);
}

function object(rand, depth = 0) {
  const out = {};
  const count = Math.floor(rand() * 6);
  for (let i = 0; i < count; i += 1) out[FIELDS[Math.floor(rand() * FIELDS.length)]] = value(rand, depth);
  return out;
}

const DEEP = [65, 1000, 100_000].map((d) => `{"shape":${'['.repeat(d)}${']'.repeat(d)},"dtype":"bf16"}`);
const DEEP_OBJECTS = [200, 20_000].map((d) => `{"model":${'{"a":'.repeat(d)}1${'}'.repeat(d)}}`);

function mutate(rand, text) {
  const chars = [...text];
  const edits = 1 + Math.floor(rand() * 4);
  for (let e = 0; e < edits; e += 1) {
    const at = Math.floor(rand() * (chars.length + 1));
    const r = rand();
    if (r < 0.4) chars.splice(at, 0, JUNK[Math.floor(rand() * JUNK.length)]);
    else if (r < 0.7) chars.splice(at, 1);
    else if (r < 0.85)
      chars.length = at; // truncate
    else chars.splice(at, 1, JUNK[Math.floor(rand() * JUNK.length)]);
  }
  return chars.join('');
}

function method(rand) {
  const r = rand();
  if (r < 0.9) return methods[Math.floor(rand() * methods.length)];
  if (r < 0.95) return mutate(rand, methods[Math.floor(rand() * methods.length)]);
  return ['', 'x'.repeat(1000), 'params\u001b[2J', '\ud800', 'é'][Math.floor(rand() * 5)];
}

function argsText(rand, name) {
  const r = rand();
  if (r < 0.01) return DEEP[Math.floor(rand() * DEEP.length)];
  if (r < 0.015) return DEEP_OBJECTS[Math.floor(rand() * DEEP_OBJECTS.length)];
  const structured = JSON.stringify(object(rand));
  if (MEASURING.has(name)) return `${structured.slice(0, -1)}é`; // never valid: cannot start a measurement
  if (r < 0.45) return structured;
  if (r < 0.9) return mutate(rand, structured);
  return Array.from({ length: Math.floor(rand() * 40) }, () => JUNK[Math.floor(rand() * JUNK.length)]).join('');
}

function checkEnvelope(text, label) {
  assert.equal(typeof text, 'string', label);
  const envelope = JSON.parse(text); // throws (fails the test) if not JSON
  assert.equal(typeof envelope.ok, 'boolean', `${label}: ${text.slice(0, 300)}`);
  if (envelope.ok) {
    assert.ok('result' in envelope, label);
    return envelope;
  }
  assert.equal(typeof envelope.error.field, 'string', label);
  assert.equal(typeof envelope.error.message, 'string', label);
  assert.ok(envelope.error.message.length > 0, label);
  assert.ok(!/[\u0000-\u001f\u007f]/.test(envelope.error.message), `control character in: ${envelope.error.message}`);
  return envelope;
}

// Raw bytes reach the engine when the binding accepts a Uint8Array for a std::string (Embind does).
function bytesCall() {
  try {
    const text = engine.module.tally_call(
      'params',
      new Uint8Array([0x7b, 0x22, 0x6d, 0x22, 0x3a, 0x22, 0xe9, 0x22, 0x7d]),
    );
    return typeof text === 'string' ? (m, bytes) => engine.module.tally_call(m, bytes) : null;
  } catch {
    return null;
  }
}

test(`${CALLS.toLocaleString('en-US')} fuzzed calls of the wasm entry point: every reply is an envelope, the module still answers`, () => {
  const before = engine.call('training_cost', reference);
  const rawBytes = bytesCall();
  const rand = rng(20240611);
  const tally = { ok: 0, error: 0, utf8: 0, depth: 0, bytes: 0 };
  for (let i = 0; i < CALLS; i += 1) {
    const name = method(rand);
    let text;
    if (rawBytes && rand() < 0.05) {
      const source = new TextEncoder().encode(argsText(rand, name));
      const bytes = new Uint8Array(source.length + 1);
      bytes.set(source);
      const at = Math.floor(rand() * bytes.length);
      bytes.copyWithin(at + 1, at);
      bytes[at] = [0xff, 0xc0, 0xed, 0x80, 0xe9, 0xf4][Math.floor(rand() * 6)]; // an ill-formed UTF-8 byte
      text = rawBytes(name, bytes);
      tally.bytes += 1;
    } else {
      text = engine.raw(name, argsText(rand, name));
    }
    const envelope = checkEnvelope(text, `call ${i} (${name.slice(0, 40)})`);
    if (envelope.ok) tally.ok += 1;
    else {
      tally.error += 1;
      if (envelope.error.message.includes('UTF-8')) tally.utf8 += 1;
      if (envelope.error.message.includes('deeper than')) tally.depth += 1;
    }
  }
  // the module still answers, with the same numbers
  assert.deepEqual(engine.call('training_cost', reference), before);
  assert.equal(tally.ok + tally.error, CALLS);
  assert.ok(tally.ok > 1000, `some fuzzed calls must be valid: ${JSON.stringify(tally)}`);
  assert.ok(tally.depth > 100, `deep nesting must be exercised: ${JSON.stringify(tally)}`);
  if (rawBytes) assert.ok(tally.utf8 > 100, `invalid UTF-8 must be exercised: ${JSON.stringify(tally)}`);
  console.log(`# fuzz: ${JSON.stringify(tally)}`);
});

test('120,000 calls with malformed non-ASCII JSON (a trap after ~110,000 before the fix) leave the module answering', () => {
  const before = engine.call('training_cost', reference);
  for (let i = 0; i < 120_000; i += 1) {
    const envelope = JSON.parse(engine.raw(i % 2 ? 'params' : 'training_cost', i % 3 ? 'é' : '{“model”: “gpt2”}'));
    assert.equal(envelope.ok, false);
    assert.equal(envelope.error.field, 'args');
  }
  assert.deepEqual(engine.call('training_cost', reference), before);
});
