// Host-friendly behaviour (issue 26, item 3; docs/EMBEDDING.md "On a host page"): the iframe route serves every
// widget that offers it, a host's URL is the host's, the widget follows the host's theme with readable colours,
// keys typed into a widget stay there, `compact` fits a 960x700 slide, and the roofline keeps the author's order.
import test from 'node:test';
import assert from 'node:assert/strict';
import { startSite, DESKTOP, sitePage } from './harness.mjs';
import { native, open, setControl, errors, watch, inNewDocument, gotoAgain } from './page-helpers.mjs';

const TAGS = [
  'tally-memory-budget',
  'tally-compute',
  'tally-float',
  'tally-roofline',
  'tally-inference',
  'tally-step',
  'tally-collectives',
];

/** Serves `body` as a host page at /host-<name>.html of the test site (no tally meta tags) and opens it. */
async function openHost(site, page, name, body, { head = '', htmlAttributes = '', query = '' } = {}) {
  watch(page);
  const file = `/host-${name}.html`;
  const html = `<!doctype html><html lang="en"${htmlAttributes}><head><meta charset="utf-8"><title>${name}</title>
<link rel="icon" href="data:,">${head}<script type="module" src="/tally-widgets.js"></script></head><body>${body}</body></html>`;
  await page.route(`**${file}*`, (route) => route.fulfill({ contentType: 'text/html', body: html }));
  await page.goto(new URL(`${file}${query}`, site.url).href);
  await page.evaluate(async (tags) => {
    const present = tags.filter((tag) => document.querySelector(tag));
    await Promise.all(present.map((tag) => customElements.whenDefined(tag)));
    await Promise.all([...document.querySelectorAll(present.join(','))].map((el) => el.ready));
  }, TAGS);
}

test('iframe route: embed.html serves every registered widget that offers a Share control, in the state it was shared in', async (t) => {
  const { site, page } = await sitePage(t);
  await open(site, page, '/');
  await page.waitForFunction(() => document.documentElement.dataset.ready === 'true');
  // Every widget on tally's page that offers Share / embed, with the iframe snippet it offers.
  const shared = await page.evaluate(async () => {
    const { shareSnippets } = await import('/widgets/kit/share.js');
    const offering = [...document.querySelectorAll('*')].filter(
      (el) => el.localName.startsWith('tally-') && el.shadowRoot?.querySelector('details.share'),
    );
    const tags = [...new Set(offering.map((el) => el.localName))];
    return tags.map((tag) => {
      const el = document.querySelector(tag);
      const iframe = shareSnippets(el).iframe;
      return {
        tag,
        src: new DOMParser().parseFromString(iframe, 'text/html').querySelector('iframe').src,
        state: el.getState(),
      };
    });
  });
  assert.deepEqual(shared.map((w) => w.tag).sort(), [...TAGS].sort(), 'every widget offers Share / embed');
  // One tab for the frames: each snippet's src is a new document in it, with its own errors.
  const frame = await site.newPage(DESKTOP);
  for (const widget of shared) {
    await gotoAgain(frame, widget.src);
    await frame.waitForFunction(
      () => document.documentElement.dataset.ready === 'true' || document.querySelector('.embed-error'),
    );
    const shown = await frame.evaluate(() => ({
      error: document.querySelector('.embed-error')?.textContent ?? null,
      tag: document.querySelector('#embed > *')?.localName,
      state: document.querySelector('#embed > *')?.getState?.() ?? null,
    }));
    assert.equal(shown.error, null, `${widget.tag}: embed.html refused its own Share snippet`);
    assert.equal(shown.tag, widget.tag);
    assert.deepEqual(shown.state, widget.state, `${widget.tag}: the frame shows the shared state`);
    assert.deepEqual(errors(frame), [], `${widget.tag}: no errors in the frame`);
  }
  await frame.close();
  const registered = await page.evaluate(async () => (await import('/widgets/base.js')).widgetTags());
  assert.deepEqual(registered.sort(), [...TAGS].sort(), 'embed.html takes its list from the registered widgets');
});

test("URL state: on a host's page a widget neither writes nor reads the host's URL unless the author opts in with url-state", async (t) => {
  const { site, page } = await sitePage(t);
  await openHost(
    site,
    page,
    'url',
    '<tally-float format="e4m3" value="500"></tally-float><tally-compute id="kept" gpus="64" url-state></tally-compute>',
    { query: '?lesson=2&float1.value=7&kept.gpus=128' },
  );
  const float = page.locator('tally-float');
  assert.equal((await float.evaluate((el) => el.getState())).value, '500', "the host's float1.value is not read");
  assert.equal((await page.locator('tally-compute').evaluate((el) => el.getState())).gpus, '128', 'url-state reads');
  await setControl(float, 'value', '448');
  await setControl(page.locator('tally-compute'), 'mfu', '0.3');
  await page.evaluate(async () => (await import('/state.js')).flushState());
  const params = await page.evaluate(() => [...new URLSearchParams(location.search)]);
  assert.deepEqual(
    params.filter(([p]) => p.startsWith('float1.')),
    [['float1.value', '7']],
    "no float1.* parameter added; the host's own left as it was",
  );
  assert.ok(
    params.some(([p]) => p === 'lesson'),
    "the host's own parameter stays",
  );
  assert.equal(await page.evaluate(() => new URLSearchParams(location.search).get('kept.mfu')), '0.3');
  // The Share link of a widget without URL state is embed.html in that state, not the host's page.
  const link = await float.evaluate(async (el) => (await import('/widgets/kit/share.js')).shareSnippets(el).url);
  assert.match(link, /\/embed\.html\?widget=float&format=e4m3&value=448/);

  // tally's own page is the author: its widgets keep their state in its URL.
  const own = await site.newPage(DESKTOP);
  await open(site, own, '/');
  await own.waitForFunction(() => document.documentElement.dataset.ready === 'true');
  await setControl(own.locator('tally-float').first(), 'value', '448');
  await own.waitForFunction(() => /float1\.value=448/.test(location.search));
  assert.deepEqual([...errors(page), ...errors(own)], []);
});

/** WCAG contrast ratio of two computed `rgb(...)` colours. */
function contrast(a, b) {
  const luminance = (text) => {
    const [r, g, bl] = text
      .match(/[\d.]+/g)
      .slice(0, 3)
      .map((v) => Number(v) / 255)
      .map((c) => (c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4));
    return 0.2126 * r + 0.7152 * g + 0.0722 * bl;
  };
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x);
  return (hi + 0.05) / (lo + 0.05);
}

/** The widget's theme and the computed colours of its text roles and backgrounds. */
function themeOf(locator) {
  return locator.evaluate((el) => {
    const probe = document.createElement('span');
    el.shadowRoot.append(probe);
    const colour = (value) => {
      probe.style.color = value;
      return getComputedStyle(probe).color;
    };
    const roles = Object.fromEntries(
      ['fg', 'muted', 'error', 'ok', 'warn', 'accent'].map((r) => [r, colour(`var(--${r})`)]),
    );
    const backgrounds = { panel: colour('var(--panel)'), bg: colour('var(--bg)') };
    probe.remove();
    const panel = getComputedStyle(el.shadowRoot.querySelector('.widget')).backgroundColor;
    return { theme: el.dataset.tallyTheme, roles, backgrounds, panel };
  });
}

test("theme: the widget follows its theme attribute, else the host's toggle or color-scheme, else the OS, with text at 4.5:1 or more", async (t) => {
  const site = await startSite();
  t.after(() => site.close());
  const cases = [
    { name: 'os-light', scheme: 'light', want: 'light' },
    { name: 'os-dark', scheme: 'dark', want: 'dark' },
    { name: 'vitepress', scheme: 'light', htmlAttributes: ' class="dark"', want: 'dark' },
    { name: 'docusaurus', scheme: 'light', htmlAttributes: ' data-theme="dark"', want: 'dark' },
    { name: 'docusaurus-light', scheme: 'dark', htmlAttributes: ' data-theme="light"', want: 'light' },
    { name: 'material', scheme: 'light', bodyAttr: 'slate', want: 'dark' },
    { name: 'color-scheme', scheme: 'light', head: '<style>:root { color-scheme: dark; }</style>', want: 'dark' },
    {
      name: 'attribute-dark',
      scheme: 'light',
      htmlAttributes: ' data-theme="light"',
      attrs: 'theme="dark"',
      want: 'dark',
    },
    { name: 'attribute-light', scheme: 'dark', htmlAttributes: ' class="dark"', attrs: 'theme="light"', want: 'light' },
  ];
  const seen = {};
  // One tab for every case: each host page is a new document in it, with the OS scheme emulated first.
  const hostPage = await site.browser.newPage({ viewport: DESKTOP });
  hostPage.errors = [];
  hostPage.on('pageerror', (error) => hostPage.errors.push(error.message));
  for (const c of cases) {
    const page = hostPage;
    await page.emulateMedia({ colorScheme: c.scheme });
    const widget = `<tally-memory-budget ${c.attrs ?? ''} model="llama-3-8b"></tally-memory-budget>`;
    await inNewDocument(page, () =>
      openHost(site, page, c.name, widget, { htmlAttributes: c.htmlAttributes, head: c.head }),
    );
    assert.equal(
      await page.evaluate(() => matchMedia('(prefers-color-scheme: dark)').matches),
      c.scheme === 'dark',
      `${c.name}: the OS scheme is ${c.scheme}`,
    );
    if (c.bodyAttr) {
      // Material for MkDocs sets its palette on <body>, and flips it at run time.
      await page.evaluate((v) => document.body.setAttribute('data-md-color-scheme', v), c.bodyAttr);
      await page.waitForFunction(() => document.querySelector('tally-memory-budget').dataset.tallyTheme === 'dark');
    }
    const seenTheme = await themeOf(page.locator('tally-memory-budget'));
    assert.equal(seenTheme.theme, c.want, `${c.name}: theme`);
    assert.equal(seenTheme.panel, seenTheme.backgrounds.panel, `${c.name}: the box is painted in the theme's panel`);
    seen[c.want] = seenTheme;
    for (const [role, colour] of Object.entries(seenTheme.roles))
      for (const [where, background] of Object.entries(seenTheme.backgrounds)) {
        const ratio = contrast(colour, background);
        assert.ok(ratio >= 4.5, `${c.name}: ${role} ${colour} on ${where} ${background} is ${ratio.toFixed(2)}:1`);
      }
    assert.deepEqual(page.errors, []);
  }
  await hostPage.close();
  assert.notEqual(seen.light.panel, seen.dark.panel, 'the two themes paint differently');

  // A host's toggle flipped at run time (VitePress's button) re-themes the widget.
  const page = await site.newPage(DESKTOP);
  await openHost(site, page, 'toggle', '<tally-compute></tally-compute>');
  assert.equal(await page.locator('tally-compute').evaluate((el) => el.dataset.tallyTheme), 'light');
  await page.evaluate(() => document.documentElement.classList.add('dark'));
  await page.waitForFunction(() => document.querySelector('tally-compute').dataset.tallyTheme === 'dark');

  // Values outside a host attribute's range are named in the widget, with the values it takes.
  const bad = await site.newPage(DESKTOP);
  await openHost(site, bad, 'bad', '<tally-float theme="blue" url-state="maybe"></tally-float>', {
    query: '?float1.value=2',
  });
  const notice = await bad.locator('tally-float .url-notice').textContent();
  assert.match(notice, /Ignored attribute theme="blue": not one of light, dark, auto\./);
  assert.match(notice, /Ignored attribute url-state="maybe": not one of \(empty\), on, off, true, false\./);
  assert.notEqual(
    (await bad.locator('tally-float').evaluate((el) => el.getState())).value,
    '2',
    'a refused url-state is off',
  );
  assert.equal(await bad.locator('tally-float').evaluate((el) => el.dataset.tallyTheme), 'light');
});

test("slides: keys typed into a widget's fields never reach the host's shortcuts, and compact widgets fit a 960x700 slide", async (t) => {
  const site = await startSite();
  t.after(() => site.close());
  const page = await site.newPage({ width: 1280, height: 800 });
  const widgets = TAGS.map((tag) => `<${tag} compact></${tag}>`).join('');
  await openHost(site, page, 'deck', `<div class="slide" style="width: 960px">${widgets}</div>`, {
    head: `<script>window.deckKeys = []; for (const type of ['keydown', 'keyup', 'keypress'])
      document.addEventListener(type, (e) => window.deckKeys.push(type + ':' + e.key));</script>`,
  });
  const keys = ['ArrowRight', 'ArrowLeft', ' ', '.', 'b', 'PageDown'];
  const kinds = ['button', 'input:not([type="checkbox"])', 'select'];
  for (const tag of TAGS)
    for (const kind of kinds) {
      const control = page.locator(`${tag} ${kind}:visible`).first();
      if (kind !== 'input:not([type="checkbox"])' && !(await control.count())) continue; // every widget has a text field
      await control.focus();
      const focused = await page.evaluate(() => document.activeElement?.shadowRoot?.activeElement?.localName);
      assert.equal(focused, kind.split(':')[0], `${tag}: the ${kind} has the focus`);
      // A select's popup would take the keys from the page, and Space clicks a button (which may redraw it).
      const typed =
        kind === 'select' ? ['ArrowRight', 'ArrowLeft'] : kind === 'button' ? keys.filter((k) => k !== ' ') : keys;
      for (const key of typed) await page.keyboard.press(key);
      assert.deepEqual(
        await page.evaluate(() => window.deckKeys),
        [],
        `${tag}: keys typed into a ${kind} reached the host`,
      );
    }
  // The host still gets keys that were not typed into a widget.
  await page.locator('body').focus();
  await page.evaluate(() => document.activeElement.blur());
  await page.keyboard.press('ArrowRight');
  assert.ok(
    (await page.evaluate(() => window.deckKeys)).includes('keydown:ArrowRight'),
    'the deck still hears its keys',
  );

  const boxes = await page.evaluate(
    (tags) => tags.map((tag) => document.querySelector(tag).getBoundingClientRect().toJSON()),
    TAGS,
  );
  boxes.forEach((box, i) => {
    assert.ok(box.width <= 960, `${TAGS[i]} is ${box.width} px wide`);
    assert.ok(box.height <= 700, `${TAGS[i]} is ${box.height} px tall in a 960x700 slide`);
  });
  assert.deepEqual(errors(page), []);
});

test('roofline: hardware="h100-sxm,a100-80gb" keeps the author\'s order, and the first places the operations', async (t) => {
  const { site, page } = await sitePage(t);
  for (const order of ['h100-sxm,a100-80gb', 'a100-80gb,h100-sxm']) {
    await openHost(
      site,
      page,
      `roof-${order.replace(',', '-')}`,
      `<tally-roofline hardware="${order}"></tally-roofline>`,
    );
    const roof = page.locator('tally-roofline');
    const shown = await roof.evaluate((el) => ({
      state: el.getState(),
      roofs: el.roofs.map((r) => r.id),
      ops: el.ops,
    }));
    assert.equal(shown.state.hardware, order);
    assert.deepEqual(shown.roofs, order.split(','));
    const first = order.split(',')[0];
    assert.deepEqual(
      shown.ops,
      native('roofline', { hardware: first, dtype: 'bf16', seq: 2048, intensity: [0.1, 1e4] }).ops,
    );
    // A roof the reader unchecks and checks again comes after the others.
    const box = roof.locator(`input[name="hw"][value="${first}"]`);
    await box.setChecked(false);
    await box.setChecked(true);
    assert.equal((await roof.evaluate((el) => el.getState())).hardware, `${order.split(',')[1]},${first}`);
  }
  assert.deepEqual(errors(page), []);
});

test('defaults: a widget and `tally call` with the same attributes agree, or the widget names the default that differs', async (t) => {
  const { site, page } = await sitePage(t);
  await openHost(
    site,
    page,
    'defaults',
    `<tally-memory-budget id="m" model="llama-3-8b" hardware="h100-sxm"></tally-memory-budget>
     <tally-compute id="c" model="llama-3-8b"></tally-compute>
     <tally-memory-budget id="m2" model="llama-3-8b" hardware="h100-sxm" seq="2048"></tally-memory-budget>
     <tally-compute id="c2" model="llama-3-8b" basis="exact" seq="2048"></tally-compute>
     <tally-step id="s" model="llama-3-70b" hardware="h100-sxm"></tally-step>
     <tally-step id="s2" model="llama-3-70b" hardware="h100-sxm" gpus="8" tp="8" batch="1" seq="2048" zero="0" sp="false" flash="false"></tally-step>
     <tally-step id="s3" model="llama-3-70b" hardware="h100-sxm" gpus="8" tp="8" pp="1" batch="1" seq="2048" zero="0" sp="false" flash="false"></tally-step>
     <tally-inference id="i" model="llama-3-8b" hardware="h100-sxm"></tally-inference>
     <tally-inference id="i2" model="llama-3-8b" hardware="h100-sxm" batch="1"></tally-inference>`,
  );
  const note = (id) =>
    page.evaluate(
      (id) => document.getElementById(id).shadowRoot.querySelector('.defaults-note')?.textContent ?? '',
      id,
    );
  // Left to the widget's defaults: the note names each one the engine chooses differently.
  assert.match(
    await note('m'),
    /tally call memory_budget.*seq is 4096 here, 2048 in the engine \(Llama 2's pretraining context; the engine's default is GPT-3's\)/,
  );
  assert.match(
    await note('c'),
    /tally call training_cost.*basis is six_nd here, exact in the engine \(the 6ND rule chapter 3 derives\); seq is 4096 here, 2048 in the engine \(Llama 2's/,
  );
  // Set by the author to the engine's choice: no note, and the engine's answer without them is the widget's.
  assert.equal(await note('m2'), '');
  assert.equal(await note('c2'), '');
  const m2 = await page.locator('#m2').evaluate((el) => ({ args: el.lastCall.args, budget: el.lastCall.result }));
  const { seq, ...memoryArgs } = m2.args;
  assert.equal(seq, 2048);
  assert.deepEqual(native('memory_budget', memoryArgs), m2.budget);
  const c2 = await page.locator('#c2').evaluate((el) => el.lastCall);
  const { flops_basis: basis, seq: computeSeq, ...costArgs } = c2.args;
  assert.deepEqual([basis, computeSeq], ['exact', 2048]);
  assert.deepEqual(native('training_cost', costArgs), c2.result);

  assert.match(
    await note('s'),
    /tally call step_time.*gpus is 64 here, 1 in the engine \(a layout in which Llama 3 70B fits 64 H100s\); tp is 4 here, 1 in the engine \(a layout.*\); pp is 4 here, 1 in the engine \(a layout.*\); batch is 512 here, 1 in the engine \(a layout.*\); seq is 8192 here, 2048 in the engine \(Llama 3's pretraining context\); zero is 1 here, 0 in the engine \(the optimizer states sharded.*\); sp is true here, false in the engine \(as large tensor-parallel runs train\); flash is true here, false in the engine \(as large/,
  );
  assert.match(await note('i'), /tally call inference.*batch is 8 here, 1 in the engine \(a few sequences at once/);
  assert.equal(await note('i2'), '');
  // pp is left to the widget, whose 4 does not divide 8 GPUs with tp 8: the note names what the engine does instead.
  assert.match(await note('s2'), /pp is 4 here, 1 in the engine/);
  // With every default the page relies on matching the engine's, `tally call` with the page's attributes alone agrees.
  const s3 = await page.locator('#s3').evaluate((el) => el.lastCall.result);
  const attributes = { model: 'llama-3-70b', hardware: 'h100-sxm', gpus: 8, tp: 8, pp: 1, global_batch: 1, seq: 2048 };
  assert.deepEqual(
    native('step_time', { ...attributes, zero: 0, sequence_parallel: false, flash_attention: false }),
    s3,
  );
  assert.equal(await note('s3'), '');
  const i2 = await page.locator('#i2').evaluate((el) => el.lastCall);
  const { batch: _batch, ...inferenceArgs } = i2.args;
  assert.deepEqual(native('inference', inferenceArgs), i2.result);
  assert.deepEqual(errors(page), []);
});
