// Curves that follow the widget beside them (issue 15, item 2). Each engine curve in a chapter with a
// calculator is redrawn from that calculator's current engine arguments, with a ring at the calculator's own
// setting. The build-time drawing (web/figures.js via scripts/build/build-site.mjs) stays until then, and for
// readers without scripts. Redrawing waits until the curve is near the viewport, so off-screen curves cost
// nothing at load. Reads each widget's last successful engine arguments; never computes a number itself.
import { getEngine } from './engine.js';
import { renderFigure } from './figures.js';

const omit = (object, keys) => Object.fromEntries(Object.entries(object).filter(([k]) => !keys.includes(k)));

/** Figure name -> the widget it follows and the figure options read from that widget (null: nothing to follow yet). */
export const FOLLOWS = {
  'activations-vs-seq': {
    widget: 'tally-memory-budget',
    options: (w) =>
      w.budgetArgs?.model && w.method !== 'finetune' // a fine-tuning budget is not the curve's pre-training one
        ? {
            base: omit(w.budgetArgs, ['seq', 'flash_attention', 'gpus', 'zero']),
            marker: { seq: w.budgetArgs.seq, flash: Boolean(w.budgetArgs.flash_attention) },
          }
        : null,
  },
  'zero-vs-gpus': {
    widget: 'tally-memory-budget',
    options: (w) =>
      w.budgetArgs?.model && w.method !== 'finetune' // a fine-tuning budget is not the curve's pre-training one
        ? {
            base: omit(w.budgetArgs, ['gpus', 'zero']),
            marker: { gpus: w.budgetArgs.gpus ?? 1, zero: w.budgetArgs.zero ?? 0 },
          }
        : null,
  },
  'time-vs-mfu': {
    widget: 'tally-compute',
    options: (w) =>
      w.result?.args ? { base: omit(w.result.args, ['mfu']), marker: { mfu: w.result.args.mfu } } : null,
  },
  'intensity-vs-tokens': {
    widget: 'tally-roofline',
    options: (w) => (w.roofs?.length ? { hardware: w.roofs[0].id } : null),
  },
};

function follow(figure, name, spec, engine) {
  const widget = figure.closest('section')?.querySelector(spec.widget);
  if (!widget) return;
  let drawn = '',
    visible = false,
    pending = false;
  const draw = () => {
    pending = false;
    if (!visible) return;
    const options = spec.options(widget);
    const key = options && JSON.stringify(options);
    if (!key || key === drawn) return;
    let svgText;
    // A setting the curve cannot draw (a layout the engine refuses at some GPU count) keeps the last drawing.
    try {
      svgText = renderFigure(name, engine, options);
    } catch {
      return;
    }
    const template = document.createElement('template');
    template.innerHTML = svgText;
    figure.querySelector('svg.fig-svg')?.replaceWith(template.content.firstElementChild);
    figure.dataset.follows = spec.widget;
    drawn = key;
  };
  const schedule = () => {
    if (!pending) {
      pending = true;
      requestAnimationFrame(draw);
    }
  };
  // `input` is composed and reaches the widget element; `change` (selects, committed fields) stays inside the
  // open shadow root, so it is heard there, after the widget's own listener has updated it.
  widget.addEventListener('input', schedule);
  widget.shadowRoot?.addEventListener('change', schedule);
  widget.addEventListener('measured', schedule);
  new IntersectionObserver(
    (entries) => {
      visible = entries.some((e) => e.isIntersecting);
      if (visible) schedule();
    },
    { rootMargin: '300px 0px' },
  ).observe(figure);
}

async function main() {
  const figures = Object.keys(FOLLOWS)
    .map((name) => [document.getElementById(`fig-${name}`), name])
    .filter(([figure]) => figure);
  if (!figures.length) return;
  const engine = await getEngine();
  for (const [figure, name] of figures) {
    const spec = FOLLOWS[name];
    await customElements.whenDefined(spec.widget);
    const widget = figure.closest('section')?.querySelector(spec.widget);
    await widget?.ready;
    follow(figure, name, spec, engine);
  }
}

main();
