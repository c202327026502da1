// web/engine.js refuses NaN, Infinity, -Infinity and undefined in any argument with a TallyError naming that
// argument, before the wasm is called: JSON.stringify would send null for them (or drop the key), and the engine
// would quietly run with the argument's default. Every argument of every method, as the engine declares them
// (`methods {detail: true}`), is tried inside each method's valid example call (scripts/upkeep/contract-examples.mjs).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadModule } from './engine.mjs';
import { EXAMPLES } from '../../scripts/upkeep/contract-examples.mjs';

const module = await loadModule();
let wasmCalls = 0;
// The engine module as web/engine.js sees it, counting the calls that reach the wasm.
const counted = Object.create(module, {
  tally_call: {
    value: (method, argsText) => {
      wasmCalls += 1;
      return module.tally_call(method, argsText);
    },
  },
});
globalThis.createTallyModule = async () => counted;
const { getEngine, TallyError } = await import('../../web/engine.js');
const engine = await getEngine();
const declared = engine.call('methods', { detail: true });
const exampleOf = (name) => [EXAMPLES[name]].flat()[0];

const UNSENDABLE = [NaN, Infinity, -Infinity, undefined];

/** Asserts that engine.call(method, args) throws a TallyError on `field` whose message starts with `where`, without the wasm. */
function assertRefused(method, args, field, where, label, message = /./) {
  const before = wasmCalls;
  assert.throws(
    () => engine.call(method, args),
    (error) => {
      assert.ok(error instanceof TallyError, `${label}: a TallyError, got ${error}`);
      assert.equal(error.field, field, label);
      assert.ok(error.message.startsWith(`${where} `), `${label}: ${error.message}`);
      assert.match(error.message, message, label);
      return true;
    },
  );
  assert.equal(wasmCalls, before, `${label}: the wasm was not called`);
}

test('NaN, Infinity, -Infinity and undefined in any argument of any method are refused naming it, before the wasm', () => {
  let numeric = 0;
  for (const method of declared) {
    const example = exampleOf(method.name);
    assert.ok(example, `${method.name} has an example call`);
    for (const arg of method.args) {
      if (arg.type === 'integer' || arg.type === 'number') numeric += 1;
      for (const bad of UNSENDABLE) {
        const label = `${method.name}.${arg.name} = ${bad}`;
        const message =
          bad === undefined
            ? /^\S+ is undefined: give it a value, or leave it out for the default$/
            : /^\S+ is (NaN|Infinity|-Infinity), which JSON cannot carry: give a finite number$/;
        assertRefused(method.name, { ...example, [arg.name]: bad }, arg.name, arg.name, label, message);
        // Alone too (a required argument missing does not come first).
        assertRefused(method.name, { [arg.name]: bad }, arg.name, arg.name, `${label}, alone`, message);
      }
    }
  }
  assert.ok(numeric >= 100, `${numeric} numeric arguments checked`);
});

test('inside arrays and objects too: the argument holding the value is the field, the message gives the path', () => {
  assertRefused('block_quantize', { scheme: 'mxfp8_e4m3', values: [1, 2, NaN] }, 'values', 'values[2]', 'array');
  assertRefused(
    'roofline_custom',
    { ...exampleOf('roofline_custom'), intensity: [1, Infinity] },
    'intensity',
    'intensity[1]',
    'array',
  );
  const model = { ...engine.call('model', { model: 'gpt2-small' }).model };
  assertRefused('params', { model: { ...model, layers: undefined } }, 'model', 'model.layers', 'object');
  assertRefused('params', { model: { ...model, hidden: -Infinity } }, 'model', 'model.hidden', 'object');
  // [1, , 3] has a hole: JSON would send null there.
  // eslint-disable-next-line no-sparse-arrays
  assertRefused('block_quantize', { scheme: 'mxfp8_e4m3', values: [1, , 3] }, 'values', 'values[1]', 'hole');
});

test('calls JSON can carry still reach the engine: every example, a shared array, null for "absent", "inf" as text', () => {
  for (const method of declared) {
    const before = wasmCalls;
    try {
      engine.call(method.name, exampleOf(method.name));
    } catch (error) {
      assert.fail(`${method.name}'s example was refused: ${error.field}: ${error.message}`);
    }
    assert.ok(
      wasmCalls === before + 1 || ['presets', 'gemm_kernels', 'float_formats', 'recipes'].includes(method.name),
    );
  }
  const shared = [1, 2, 3, 4];
  assert.ok(engine.call('roofline_custom', { ...exampleOf('roofline_custom'), intensity: shared }));
  assert.ok(engine.call('training_cost', { ...exampleOf('training_cost'), dollars_per_gpu_hour: null }));
  // Text the engine reads as NaN or infinity is still text: float_encode takes it.
  assert.equal(engine.call('float_encode', { format: 'fp16', value: 'inf' }).code, 0x7c00);
});

test('arguments JSON cannot write at all (a cycle, a BigInt) are a TallyError on "args", not a TypeError', () => {
  const cyclic = { model: 'gpt2-small' };
  cyclic.self = cyclic;
  assertRefused('params', { model: cyclic }, 'args', 'the arguments', 'cycle');
  assertRefused('training_cost', { ...exampleOf('training_cost'), gpus: 8n }, 'args', 'the arguments', 'BigInt');
});
