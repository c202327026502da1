// Curves that follow the widget beside them (issue 15, item 2). Each engine curve in a chapter with a
// calculator is redrawn from that calculator's current engine arguments, with a ring at the calculator's own
// setting. The build-time drawing (web/figures/, one module per figure, via scripts/build/build-site.mjs) stays until then, and for
// readers without scripts. Redrawing waits until the curve is near the viewport, so off-screen curves cost
// nothing at load. Reads each widget's public last call (lastCall: its last successful engine call, see
// web/widgets/kit/element.js recordCall); never computes a number itself.
import { getEngine } from './engine.js';
import { renderFigure } from './figures/index.js';
import { trustedHtml } from './widgets/kit/trusted.js';

/** A memory widget's last call when it is a preset model's pre-training budget (a fine-tuning one is not the curve's). */
const pretraining = (call) => call?.method === 'memory_budget' && Boolean(call.args.model);
const omit = (object, keys) => Object.fromEntries(Object.entries(object).filter(([k]) => !keys.includes(k)));

/** Figure name -> the widget it follows and the figure options read from that widget (null: nothing to follow yet). */
export const FOLLOWS = {
  'activations-vs-seq': {
    widget: 'tally-memory-budget',
    options: ({ lastCall: c }) =>
      pretraining(c)
        ? {
            base: omit(c.args, ['seq', 'flash_attention', 'gpus', 'zero']),
            marker: { seq: c.args.seq, flash: Boolean(c.args.flash_attention) },
          }
        : null,
  },
  'zero-vs-gpus': {
    widget: 'tally-memory-budget',
    options: ({ lastCall: c }) =>
      pretraining(c)
        ? {
            base: omit(c.args, ['gpus', 'zero']),
            marker: { gpus: c.args.gpus ?? 1, zero: c.args.zero ?? 0 },
          }
        : null,
  },
  'time-vs-mfu': {
    widget: 'tally-compute',
    options: ({ lastCall: c }) => (c ? { base: omit(c.args, ['mfu']), marker: { mfu: c.args.mfu } } : null),
  },
  'intensity-vs-tokens': {
    widget: 'tally-roofline',
    options: ({ lastCall: c }) => (c ? { hardware: c.args.hardware } : null),
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
    template.innerHTML = trustedHtml(svgText);
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
