// <tally-collectives> (web/widgets/collectives.js): its numbers are the engine's `collective` call, a refusal (0 ranks
// per node) is shown beside the field it names with no NaN on screen, and its state survives a URL round trip.
import test from 'node:test';
import assert from 'node:assert/strict';
import { startSite, screenshot, DESKTOP, PHONE, sitePage } from './harness.mjs';
import { setControl, commit, fieldError, errors, openWidgetAlone, openSection } from './page-helpers.mjs';

const open = (site, viewport, colorScheme) =>
  openSection(site, 'communication', 'tally-collectives', viewport, colorScheme);

/** The page's own engine (method collective) and the widget module's formatters, called inside the page. */
function inPage(page) {
  return {
    engine: (args) =>
      page.evaluate(async (a) => (await (await import('./engine.js')).getEngine()).call('collective', a), args),
    fmt: (fn, value) =>
      page.evaluate(async ([name, v]) => (await import('./widgets/collectives.js'))[name](v), [fn, value]),
  };
}

const out = (widget, key) => widget.locator(`[data-out="${key}"]`).textContent();

/** Waits until an output shows `expected` (the widget updates on each edit; never wait for time). */
async function waitOut(page, widget, key, expected) {
  const el = await widget.locator(`[data-out="${key}"]`).elementHandle();
  await page.waitForFunction(([node, text]) => node.textContent === text, [el, expected]);
}

test("the collectives widget shows the engine's time, algorithm and bus bandwidth and both terms", async (t) => {
  const site = await startSite();
  t.after(() => site.close());
  const { page, widget } = await open(site, DESKTOP);
  const { engine, fmt } = inPage(page);
  const args = { collective: 'all_reduce', algorithm: 'ring', hardware: 'h100-sxm', ranks_per_node: 8, nodes: 1 };
  const r = await engine({ ...args, message_bytes: 1e9 });
  assert.equal(await out(widget, 'time'), await fmt('formatSeconds', r.seconds));
  assert.equal(await out(widget, 'algbw'), await fmt('formatBandwidth', r.algorithm_bytes_per_s));
  assert.equal(await out(widget, 'busbw'), await fmt('formatBandwidth', r.bus_bytes_per_s));
  assert.equal(await out(widget, 'latency'), await fmt('formatSeconds', r.latency_seconds));
  assert.equal(await out(widget, 'bandwidth'), await fmt('formatSeconds', r.bandwidth_seconds));
  assert.match(await out(widget, 'note'), /Bandwidth-bound/);
  assert.ok((await widget.locator('svg.chart path.bus').count()) === 1, 'the message-size sweep is drawn');

  // Two nodes: the network sets the pace, and the widget follows the engine.
  await setControl(widget, 'nodes', '2');
  const two = await engine({ ...args, nodes: 2, message_bytes: 1e9 });
  await waitOut(page, widget, 'busbw', await fmt('formatBandwidth', two.bus_bytes_per_s));
  assert.match(await out(widget, 'bottleneck'), /network/);

  // A small message is latency-bound; a tree cuts the latency term.
  await setControl(widget, 'message_bytes', '1024');
  await setControl(widget, 'algorithm', 'tree');
  const tree = await engine({ ...args, nodes: 2, message_bytes: 1024, algorithm: 'tree' });
  await waitOut(page, widget, 'latency', await fmt('formatSeconds', tree.latency_seconds));
  assert.match(await out(widget, 'note'), /Latency-bound/);
  assert.doesNotMatch(await widget.locator('.results').textContent(), /NaN|Infinity|undefined/);
  await setControl(widget, 'algorithm', 'ring');
  await setControl(widget, 'message_bytes', '1e9');
  await setControl(widget, 'nodes', '1');
  await screenshot(page.locator('figure[data-widget="tally-collectives"]'), 'collectives-desktop-light');
  assert.deepEqual(page.errors, []);
});

test('the collectives widget shows a refusal of 0 ranks per node beside that field, and never NaN', async (t) => {
  const site = await startSite();
  t.after(() => site.close());
  const { page, widget } = await open(site, PHONE, 'dark');
  await commit(widget.locator('input[name="ranks_per_node"]'), '0');
  assert.match(await fieldError(widget, 'ranks_per_node'), /ranks_per_node must be from 1 to 8/);
  assert.equal(await out(widget, 'time'), '—');
  assert.doesNotMatch(await widget.locator('.results').textContent(), /NaN|Infinity/);
  // A tree is an all-reduce algorithm: asking it of an all-gather names the algorithm.
  await commit(widget.locator('input[name="ranks_per_node"]'), '8');
  await setControl(widget, 'collective', 'all_gather');
  await setControl(widget, 'algorithm', 'tree');
  assert.match(await fieldError(widget, 'algorithm'), /tree applies to all_reduce only/);
  await setControl(widget, 'algorithm', 'ring');
  assert.notEqual(await out(widget, 'time'), '—');
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert.ok(overflow <= 0, `no sideways scrolling at 375 px (${overflow}px)`);
  await screenshot(page.locator('figure[data-widget="tally-collectives"]'), 'collectives-phone-dark');
  assert.deepEqual(page.errors, []);
});

test('the collectives widget round-trips its state through the URL and reverts a refused value with a notice', async (t) => {
  const { site, page } = await sitePage(t);
  // url-state: this test page is the author's, who opts in to URL state (docs/EMBEDDING.md).
  let widget = await openWidgetAlone(site, page, 'tally-collectives', 'url-state');
  await setControl(widget, 'collective', 'all_to_all');
  await setControl(widget, 'nodes', '4');
  await setControl(widget, 'message_bytes', '3e8');
  await setControl(widget, 'hardware', 'b200');
  const state = await widget.evaluate((el) => el.getState());
  // The URL is written shortly after the last edit (web/state.js): wait for it to hold that edit.
  await page.waitForURL(/col1\.hardware=b200/);
  const query = new URL(page.url()).search;
  assert.match(query, /col1\.collective=all_to_all/);

  // The same URL on a fresh page gives the same state and the same numbers.
  const again = await site.newPage(DESKTOP);
  widget = await openWidgetAlone(site, again, 'tally-collectives', 'url-state', { query });
  assert.deepEqual(await widget.evaluate((el) => el.getState()), state);
  const { engine, fmt } = inPage(again);
  const r = await engine({
    collective: 'all_to_all',
    algorithm: 'ring',
    hardware: 'b200',
    message_bytes: 3e8,
    ranks_per_node: 8,
    nodes: 4,
  });
  assert.equal(await out(widget, 'time'), await fmt('formatSeconds', r.seconds));

  // 9 ranks on an 8-GPU node passes the URL check (a number) but the engine refuses it: back to 8, with a notice.
  const third = await site.newPage(DESKTOP);
  widget = await openWidgetAlone(site, third, 'tally-collectives', 'url-state', {
    query: '?col1.ranks_per_node=9&col1.nodes=2',
  });
  const reverted = await widget.evaluate((el) => el.getState());
  assert.equal(reverted.ranks_per_node, '8');
  assert.equal(reverted.nodes, '2');
  assert.match(await widget.locator('.url-notice').textContent(), /col1\.ranks_per_node/);
  assert.deepEqual(errors(page), []);
  assert.deepEqual(errors(again), []);
  assert.deepEqual(errors(third), []);
});
