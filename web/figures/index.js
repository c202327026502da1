// The page's explanatory figures and curves, one module each in this folder, drawn as SVG at build time by
// scripts/build/build-site.mjs; in the browser web/curves.js redraws the curves from the public last call
// (lastCall) of the widget beside each. Diagrams are drawn from small data tables in their module (shapes,
// schedules, which state each kind of parallelism splits); curves and every number in a label come from the wasm
// engine, never from a formula here. svg.js holds the drawing primitives, line-chart.js the chart of the curves.
import strides from './strides.js';
import matmul from './matmul.js';
import backward from './backward.js';
import parallelism from './parallelism.js';
import pipeline from './pipeline.js';
import bitLayouts from './bit-layouts.js';
import activationCurve from './activations-vs-seq.js';
import zeroCurve from './zero-vs-gpus.js';
import mfuCurve from './time-vs-mfu.js';
import intensityCurve from './intensity-vs-tokens.js';
import pipelineSchedules from './pipeline-schedules.js';
import overlapTimeline from './overlap-timeline.js';
import attentionVsSeq from './attention-vs-seq.js';
import moeDrops from './moe-drops.js';
import goodputCurve from './goodput-vs-interval.js';
import validationScatter from './validation-scatter.js';
import stepTimeline from './step-timeline.js';

export { chart } from './line-chart.js';
export { SPLITS } from './parallelism.js';

const FIGURES = {
  strides,
  matmul,
  backward,
  parallelism,
  pipeline,
  'pipeline-schedules': pipelineSchedules,
  'overlap-timeline': overlapTimeline,
  'attention-vs-seq': attentionVsSeq,
  'moe-drops': moeDrops,
  'bit-layouts': bitLayouts,
  'activations-vs-seq': activationCurve,
  'zero-vs-gpus': zeroCurve,
  'time-vs-mfu': mfuCurve,
  'intensity-vs-tokens': intensityCurve,
  'goodput-vs-interval': goodputCurve,
  'validation-scatter': validationScatter,
  'step-timeline': stepTimeline,
};
export const FIGURE_NAMES = Object.keys(FIGURES);

/** The SVG of one named figure (engine: { call(method, args) }). Throws for an unknown name. */
export function renderFigure(name, engine, options = {}) {
  const draw = FIGURES[name];
  if (!draw) throw new Error(`unknown figure; known: ${FIGURE_NAMES.join(', ')}`);
  return draw(engine, options);
}
