// Where a cold page load's time goes, to decide what to make faster (the page-load benchmark gives only totals).
// One headless Chromium, medians over --runs cold loads of one built site: a devtools timeline trace summed by
// kind of main-thread work (HTML parsing, style, layout, paint, script compile and run, wasm compile), the
// engine's load (tally.wasm fetched, module instantiated) and its calls, timed per method and per widget mount.
// Trace times are wall-clock: on a loaded machine every kind grows; "other" is task time in no named kind.
// usage: node scripts/bench/profile-page-load.mjs [--runs 5] [--site build/site]
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { launchChromium } from '../dev/chromium.mjs';
import { startServer } from '../dev/static-server.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const argv = process.argv.slice(2);
const option = (name, fallback) => (argv.includes(name) ? argv[argv.indexOf(name) + 1] : fallback);
const runs = Number(option('--runs', 5));
const siteDir = path.resolve(root, option('--site', 'build/site'));
if (!(runs >= 1)) {
  console.error('profile-page-load: --runs must be a positive number');
  process.exit(2);
}

/** In the page before any script: times the engine factory, every tally_call and every widget's build(). */
function instrument() {
  const profile = (globalThis.__profile = { calls: [], mounts: [], engineStart: null, engineReady: null });
  let factory;
  Object.defineProperty(globalThis, 'createTallyModule', {
    configurable: true,
    get: () => factory,
    set(original) {
      factory = (options) => {
        profile.engineStart = performance.now();
        return Promise.resolve(original(options)).then((module) => {
          profile.engineReady = performance.now();
          const call = module.tally_call;
          module.tally_call = (method, args) => {
            const start = performance.now();
            try {
              return call(method, args);
            } finally {
              profile.calls.push({ method, ms: performance.now() - start });
            }
          };
          return module;
        });
      };
    },
  });
  const define = customElements.define.bind(customElements);
  customElements.define = (name, cls, options) => {
    const build = cls.prototype.build;
    // TallyWidgets only (their build() is the mount; an inline <tally-value> has a build() of its own).
    if (typeof build === 'function' && typeof cls.prototype.applyParts === 'function') {
      cls.prototype.build = function timedBuild(...rest) {
        const start = performance.now();
        const callsBefore = profile.calls.length;
        try {
          return build.apply(this, rest);
        } finally {
          const calls = profile.calls.slice(callsBefore);
          profile.mounts.push({
            tag: name,
            start,
            ms: performance.now() - start,
            calls: calls.length,
            callMs: calls.reduce((s, c) => s + c.ms, 0),
          });
        }
      };
    }
    return define(name, cls, options);
  };
}

// Trace event names grouped into the kinds of work the report shows (top-level events on the renderer's main thread).
const KINDS = {
  'parse HTML': ['ParseHTML'],
  style: ['UpdateLayoutTree', 'RecalculateStyles', 'ParseAuthorStyleSheet'],
  layout: ['Layout'],
  'paint + composite': [
    'Paint',
    'PaintImage',
    'CompositeLayers',
    'UpdateLayer',
    'UpdateLayerTree',
    'PrePaint',
    'Layerize',
  ],
  'script compile': [
    'v8.compile',
    'v8.parseOnBackground',
    'V8.CompileModule',
    'v8.compileModule',
    'V8.ScriptCompiler',
    'CacheScript',
  ],
  'wasm compile': [
    'wasm.CompileLazy',
    'v8.wasm.compileLazy',
    'wasm.SyncCompile',
    'wasm.AsyncCompile',
    'v8.wasm.streamingCompile',
    'wasm.StartStreamingCompilation',
    'v8.wasm.compiledModule',
    'wasm.ProcessCompileJob',
    'v8.wasm.compileConsume',
    'v8.wasm.compileConsumeDone',
    'v8.wasm.compileLazy',
  ],
  'script run': [
    'EvaluateScript',
    'v8.evaluateModule',
    'FunctionCall',
    'TimerFire',
    'FireAnimationFrame',
    'EventDispatch',
    'v8.run',
    'RunMicrotasks',
    'V8.Execute',
    'v8.callFunction',
    'v8.callAsConstructor',
    'v8.newInstance',
  ],
  'garbage collection': [
    'MinorGC',
    'MajorGC',
    'V8.GCScavenger',
    'V8.GCFinalizeMC',
    'V8.GC_MC_BACKGROUND_MARKING',
    'BlinkGC.AtomicPhase',
  ],
};
const kindOf = new Map(Object.entries(KINDS).flatMap(([kind, names]) => names.map((n) => [n, kind])));
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

/** Self time of each kind on the main thread up to `untilUs` (nested events are charged to the innermost known kind). */
function summariseTrace(events, navigationStartUs, untilUs) {
  // The page's renderer main thread: the one that parsed its HTML (about:blank's renderer parses nothing).
  const parse = events.find((e) => e.name === 'ParseHTML' && e.ts >= navigationStartUs);
  const onMain = events
    .filter(
      (e) =>
        parse &&
        e.pid === parse.pid &&
        e.tid === parse.tid &&
        e.ph === 'X' &&
        e.dur > 0 &&
        e.ts >= navigationStartUs &&
        e.ts < untilUs,
    )
    .sort((a, b) => a.ts - b.ts || b.dur - a.dur);
  const totals = {};
  let busy = 0;
  // Walk nested complete events with a stack: a parent's time minus its known children's goes to the parent's kind.
  const stack = [];
  const close = (until) => {
    while (stack.length && stack[stack.length - 1].end <= until) {
      const frame = stack.pop();
      if (frame.kind) totals[frame.kind] = (totals[frame.kind] ?? 0) + frame.self;
    }
  };
  for (const e of onMain) {
    close(e.ts);
    const kind = kindOf.get(e.name) ?? null;
    const parent = stack[stack.length - 1];
    if (!parent) busy += e.dur;
    const frame = { end: e.ts + e.dur, kind: kind ?? parent?.kind ?? (parent ? null : 'other'), self: e.dur };
    // A child's time is taken out of the nearest ancestor that is charged to some kind.
    if (parent)
      for (let i = stack.length - 1; i >= 0; i--)
        if (stack[i].kind) {
          stack[i].self -= e.dur;
          break;
        }
    stack.push(frame);
  }
  close(Infinity);
  return { busyMs: busy / 1000, kinds: Object.fromEntries(Object.entries(totals).map(([k, v]) => [k, v / 1000])) };
}

const server = await startServer(siteDir, 0);
const browser = await launchChromium();
const samples = [];
for (let run = 0; run < runs + 1; run++) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  await page.addInitScript(instrument);
  const cdp = await context.newCDPSession(page);
  const traceEvents = [];
  cdp.on('Tracing.dataCollected', ({ value }) => traceEvents.push(...value));
  const traceDone = new Promise((resolve) => cdp.once('Tracing.tracingComplete', resolve));
  await cdp.send('Tracing.start', {
    transferMode: 'ReportEvents',
    traceConfig: {
      includedCategories: [
        'blink.user_timing',
        'devtools.timeline',
        'v8',
        'v8.wasm',
        'blink',
        'loading',
        'disabled-by-default-devtools.timeline',
      ],
    },
  });
  await page.goto(server.url);
  await page.waitForFunction(() => document.documentElement.dataset.ready === 'true', null, {
    timeout: 60000,
    polling: 'raf',
  });
  const info = await page.evaluate(() => {
    const wasm = performance.getEntriesByType('resource').find((r) => r.name.endsWith('/tally.wasm'));
    const glue = performance.getEntriesByType('resource').find((r) => r.name.endsWith('/tally-module.js'));
    return {
      profile: globalThis.__profile,
      readyMs: Number(document.documentElement.dataset.readyMs),
      firstReadyMs: Number(document.documentElement.dataset.firstScreenReadyMs ?? NaN),
      wasmFetchedMs: wasm?.responseEnd,
      glueFetchedMs: glue?.responseEnd,
      timeOrigin: performance.timeOrigin,
      domContentLoadedMs: performance.getEntriesByType('navigation')[0]?.domContentLoadedEventEnd,
      fcpMs: performance.getEntriesByName('first-contentful-paint')[0]?.startTime,
      elements: document.getElementsByTagName('*').length,
    };
  });
  await cdp.send('Tracing.end');
  await traceDone;
  const navigation =
    traceEvents.find((e) => e.name === 'navigationStart' && e.args?.data?.isLoadingMainFrame) ??
    traceEvents.find((e) => e.name === 'navigationStart');
  const navigationUs = navigation?.ts ?? 0;
  const trace = summariseTrace(traceEvents, navigationUs, navigationUs + info.readyMs * 1000);
  const firstTrace = Number.isFinite(info.firstReadyMs)
    ? summariseTrace(traceEvents, navigationUs, navigationUs + info.firstReadyMs * 1000)
    : trace;
  if (run > 0) samples.push({ ...info, trace, firstTrace }); // run 0 warms the disk cache
  await context.close();
}
await browser.close();
await server.close();

const m = (pick) => Math.round(median(samples.map(pick)));
const p = samples[0].profile;
console.log(
  `${path.relative(root, siteDir)}: ${runs} cold loads at 1280 x 900, ${samples[0].elements} elements (medians)`,
);
console.log(
  `  first contentful paint ${m((s) => s.fcpMs)} ms; DOMContentLoaded ${m((s) => s.domContentLoadedMs)} ms; ` +
    `first screen ready ${m((s) => (Number.isFinite(s.firstReadyMs) ? s.firstReadyMs : s.readyMs))} ms; ready (all widgets wired) ${m((s) => s.readyMs)} ms`,
);
const kinds = [...new Set(samples.flatMap((s) => Object.keys(s.trace.kinds)))];
console.log(
  `  main thread, until first screen ready | until all widgets wired (busy ${m((s) => s.firstTrace.busyMs)} | ${m((s) => s.trace.busyMs)} ms):`,
);
for (const kind of kinds.sort((a, b) => m((s) => s.trace.kinds[b] ?? 0) - m((s) => s.trace.kinds[a] ?? 0)))
  console.log(
    `    ${kind.padEnd(18)} ${String(m((s) => s.firstTrace.kinds[kind] ?? 0)).padStart(5)} | ${String(m((s) => s.trace.kinds[kind] ?? 0)).padStart(5)} ms`,
  );
console.log(
  `  engine: tally-module.js fetched ${m((s) => s.glueFetchedMs)} ms, tally.wasm fetched ${m((s) => s.wasmFetchedMs)} ms, ` +
    `factory called ${m((s) => s.profile.engineStart)} ms, instantiated ${m((s) => s.profile.engineReady)} ms ` +
    `(${m((s) => s.profile.engineReady - s.profile.engineStart)} ms compile + instantiate)`,
);
console.log(
  `  engine calls before ready: ${p.calls.length} calls, ${m((s) => s.profile.calls.reduce((t, c) => t + c.ms, 0))} ms in wasm + JSON`,
);
const byMethod = {};
for (const c of p.calls) {
  byMethod[c.method] ??= { n: 0, ms: 0 };
  byMethod[c.method].n++;
  byMethod[c.method].ms += c.ms;
}
console.log(
  '    ' +
    Object.entries(byMethod)
      .sort((a, b) => b[1].ms - a[1].ms)
      .slice(0, 8)
      .map(([k, v]) => `${k} ${v.n}× ${v.ms.toFixed(1)} ms`)
      .join('; '),
);
console.log('  widget mounts (first sample: start, duration, engine calls):');
for (const w of p.mounts)
  console.log(
    `    ${w.tag.padEnd(20)} at ${Math.round(w.start)} ms, ${w.ms.toFixed(1)} ms, ${w.calls} calls (${w.callMs.toFixed(1)} ms)`,
  );
