// web/widgets/kit/chart.js: the shared chart geometry. logTicks gives the 1-2-5 ticks the inference chart labels its
// log axes with, and logScale maps the ends of its log domain onto the ends of its pixel range.
import test from 'node:test';
import assert from 'node:assert/strict';
import { logAxis, logScale, logTicks } from '../../web/widgets/kit/chart.js';

test('logTicks gives 1, 2 and 5 × 10^e inside a log10 range, ascending, ends included', () => {
  assert.deepEqual(logTicks(0, 2), [1, 2, 5, 10, 20, 50, 100]);
  // A range narrower than a decade still gets labels between its ends.
  assert.deepEqual(logTicks(Math.log10(1.5), Math.log10(30)), [2, 5, 10, 20]);
  assert.deepEqual(logTicks(-1.2, -0.9), [0.1]);
  assert.deepEqual(logTicks(0.75, 0.8), [], 'no 1-2-5 value between 10^0.75 and 10^0.8');
  assert.deepEqual(logTicks(0, 1, [1, 3]), [1, 3, 10]);
});

test('logScale maps the ends of its log domain onto the ends of the range, reversed ranges included', () => {
  const y = logScale([1, 3], [198, 14]);
  assert.equal(y(10), 198);
  assert.equal(y(1000), 14);
  assert.equal(y(100), 106);
});

test('logAxis gives at least three ticks, widening a narrow range, and thins a crowded one to its room', () => {
  // 1-2-5 ticks are enough here: the range is kept.
  assert.deepEqual(logAxis(0, 2), { lo: 0, hi: 2, ticks: [1, 2, 5, 10, 20, 50, 100] });
  // One 1-2-5 tick (0.1) inside: the finer steps (0.07, 0.08, 0.09, 0.1) give enough, in the same range.
  const narrow = logAxis(-1.2, -0.9);
  assert.ok(narrow.ticks.length >= 3, String(narrow.ticks));
  assert.ok(narrow.lo <= -1.2 && narrow.hi >= -0.9, 'widened, never narrowed');
  for (const t of narrow.ticks) assert.ok(Math.log10(t) >= narrow.lo && Math.log10(t) <= narrow.hi);
  // Between 10^0.75 (5.6) and 10^0.8 (6.3) only 6 is a digit tick: widened to 5 and 7.
  assert.deepEqual(logAxis(0.75, 0.8).ticks, [5, 6, 7]);
  // 16.6 to 28 ms (Llama 3 70B on a B200): 20 and 25 inside, widened to 15 and 30 rather than to 10.
  assert.deepEqual(logAxis(Math.log10(16.6), Math.log10(28)).ticks, [15, 20, 25, 30]);
  // Six decades in room for four labels: powers of ten, then every second one.
  assert.deepEqual(logAxis(0, 6, { room: 4 }).ticks, [1, 100, 10000, 1000000]);
  assert.deepEqual(logAxis(0, 3, { room: 4 }).ticks, [1, 10, 100, 1000]);
  // 178 to 6,070 (the inference chart at 375 px): five 1-2-5 ticks in room for four, one power of ten: every other.
  assert.deepEqual(logAxis(Math.log10(178), Math.log10(6070), { room: 4 }).ticks, [200, 1000, 5000]);
});
