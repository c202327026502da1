// web/widgets/kit/chart.js: the shared chart geometry. logTicks gives the 1-2-5 ticks the inference chart labels its
// log axes with, and logScale maps the ends of its log domain onto the ends of its pixel range.
import test from 'node:test';
import assert from 'node:assert/strict';
import { logScale, logTicks } from '../../web/widgets/kit/chart.js';

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
