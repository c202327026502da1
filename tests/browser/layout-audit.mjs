// A layout audit run inside the page (page.evaluate(layoutAudit, options)): everything a reader would see
// cut off, squeezed or broken at the current viewport width. Each finding is one line of text naming the
// element, so a failing test says what to fix. Used by tests/browser/layout.test.mjs.
//
// Checks:
//   equation   a KaTeX display equation wider than its box (scrollWidth > clientWidth) or sticking out of
//              the text column
//   page       the page itself scrolls sideways
//   clipped    an element whose content is cut off by its own box: a <select> too narrow for its chosen
//              option, an overflow:hidden/auto box whose content is wider than it, a label cut short
//   chart-clip an SVG text outside its <svg>'s visible area
//   small      text rendered smaller than `minFontPx` (SVG text counts its scale: font-size × shown width / viewBox width)
//   overlap    two SVG text labels of one chart that overprint each other
//   mid-word   a word broken across two lines although it would fit on one line of its box
export function layoutAudit({ minFontPx = 11, widgets = true } = {}) {
  const findings = [];
  const describe = (el) => {
    const host = el.getRootNode()?.host;
    const where = host
      ? `${host.localName}${host.closest('section')?.id ? `#${host.closest('section').id}` : ''} `
      : '';
    const text = (el.textContent ?? '').replace(/\s+/g, ' ').trim().slice(0, 50);
    return `${where}${el.localName}${el.classList?.length ? `.${[...el.classList].join('.')}` : ''} "${text}"`;
  };
  const visible = (el) => {
    const style = getComputedStyle(el);
    if (style.display === 'none' || style.visibility === 'hidden') return false;
    const rect = el.getBoundingClientRect();
    return (
      rect.width > 0 &&
      rect.height > 0 &&
      !el.closest('[hidden], details:not([open]) > :not(summary), .visually-hidden')
    );
  };
  const roots = [document];
  if (widgets) for (const el of document.querySelectorAll('*')) if (el.shadowRoot) roots.push(el.shadowRoot);

  // The page: no sideways scrolling.
  const pageOverflow = document.documentElement.scrollWidth - document.documentElement.clientWidth;
  if (pageOverflow > 0) findings.push(`page: scrolls sideways by ${pageOverflow}px`);

  // Display equations: fit their own box, and the box fits the column.
  const column = document.querySelector('main')?.getBoundingClientRect();
  for (const eq of document.querySelectorAll('.katex-display')) {
    const source = eq.querySelector('annotation')?.textContent?.trim().slice(0, 60) ?? '';
    const rect = eq.getBoundingClientRect();
    const overflow = eq.scrollWidth - eq.clientWidth;
    if (overflow > 1) findings.push(`equation: "${source}" is ${overflow}px wider than its box (${eq.clientWidth}px)`);
    const inner = eq.querySelector('.katex')?.getBoundingClientRect();
    if (column && inner && (inner.right > column.right + 1 || inner.left < column.left - 1))
      findings.push(`equation: "${source}" sticks out of the text column`);
    if (inner && (inner.right > rect.right + 1 || inner.left < rect.left - 1))
      findings.push(`equation: "${source}" is cut off by its box`);
  }
  // Any typeset formula (display or inline) that scrolls or is cut inside its own box.
  for (const math of document.querySelectorAll('.katex')) {
    const over = math.scrollWidth - math.clientWidth;
    if (over > 1 && math.clientWidth > 0) {
      const source = math.querySelector('annotation')?.textContent?.trim().slice(0, 60) ?? '';
      findings.push(`equation: "${source}" is ${over}px wider than the space it is shown in (${math.clientWidth}px)`);
    }
  }

  const canvas = document.createElement('canvas').getContext('2d');
  const textWidth = (text, style) => {
    canvas.font = `${style.fontStyle} ${style.fontWeight} ${style.fontSize} ${style.fontFamily}`;
    return canvas.measureText(text).width;
  };

  for (const root of roots) {
    // Selects: the chosen option's text fits inside the control (padding and the arrow take ~24 px).
    for (const select of root.querySelectorAll('select')) {
      if (!visible(select)) continue;
      const style = getComputedStyle(select);
      const text = select.selectedOptions[0]?.textContent ?? '';
      const room = select.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight) - 20;
      const need = textWidth(text, style);
      if (need > room + 0.5)
        findings.push(
          `clipped: ${describe(select)} shows "${text}" in ${Math.round(room)}px, needs ${Math.round(need)}px`,
        );
    }
    // Boxes that hide or scroll their overflow, and labels: content wider than the box is cut off.
    for (const el of root.querySelectorAll(
      'label, legend, th, td, button, .label, .value, .formula, .formula-box, .stored, .small, .verdict, figcaption, .katex-display, .scroll, .tally-figure, tally-recipes, pre',
    )) {
      if (!visible(el)) continue;
      const style = getComputedStyle(el);
      // Scroll containers that only hold a table are allowed to scroll (a table is read by scrolling it);
      // anything else that needs a scrollbar is cut off for a reader who does not find it.
      const scrolls = ['auto', 'scroll'].includes(style.overflowX);
      const hides = ['hidden', 'clip'].includes(style.overflowX) || style.textOverflow === 'ellipsis';
      const over = el.scrollWidth - el.clientWidth;
      if (over <= 1) continue;
      if (scrolls && el.querySelector('table') && !el.classList.contains('katex-display')) continue;
      if (scrolls || hides) findings.push(`clipped: ${describe(el)} hides ${over}px of its content`);
      else if (el.closest('table') === null) findings.push(`clipped: ${describe(el)} overflows its box by ${over}px`);
    }
    // HTML text smaller than the minimum.
    for (const el of root.querySelectorAll(
      'p, li, label, legend, td, th, button, span, div, figcaption, summary, option, select, input',
    )) {
      if (!visible(el) || el.closest('svg, .katex')) continue;
      const own =
        [...el.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim()) ||
        ['INPUT', 'SELECT'].includes(el.tagName);
      if (!own) continue;
      const size = parseFloat(getComputedStyle(el).fontSize);
      if (size < minFontPx - 0.01) findings.push(`small: ${describe(el)} is ${size}px`);
    }
    // Charts: every text inside the <svg>'s box, at least minFontPx as shown, and no two labels overprinting.
    for (const svg of root.querySelectorAll('svg')) {
      if (!visible(svg)) continue;
      const box = svg.getBoundingClientRect();
      const viewBox = svg.viewBox?.baseVal;
      const scale = viewBox && viewBox.width ? box.width / viewBox.width : 1;
      const texts = [...svg.querySelectorAll('text')].filter((t) => t.textContent.trim());
      const rects = [];
      for (const t of texts) {
        const r = t.getBoundingClientRect();
        if (r.left < box.left - 1 || r.right > box.right + 1 || r.top < box.top - 1 || r.bottom > box.bottom + 1)
          findings.push(
            `chart-clip: ${describe(svg)} text "${t.textContent.trim().slice(0, 40)}" is outside the chart`,
          );
        const shown = parseFloat(getComputedStyle(t).fontSize) * scale;
        if (shown < minFontPx - 0.01)
          findings.push(`small: ${describe(svg)} text "${t.textContent.trim().slice(0, 40)}" is ${shown.toFixed(1)}px`);
        rects.push({ t, r });
      }
      for (let i = 0; i < rects.length; i++)
        for (let j = i + 1; j < rects.length; j++) {
          const a = rects[i].r,
            b = rects[j].r;
          const ix = Math.min(a.right, b.right) - Math.max(a.left, b.left);
          const iy = Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top);
          // Glyph boxes include line gaps: a sliver of 2 px is spacing, not overprinting.
          if (ix > 2 && iy > 2)
            findings.push(
              `overlap: ${describe(svg)} "${rects[i].t.textContent.trim().slice(0, 30)}" and "${rects[j].t.textContent.trim().slice(0, 30)}"`,
            );
        }
    }
  }

  // Words broken across lines. A word is a run without spaces or hyphens (a break after "-", "/" or "·"
  // is a normal line break); it is a fault when it would have fit on one line of its box.
  const range = document.createRange();
  for (const root of roots) {
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const parent = node.parentElement;
      if (
        !parent ||
        parent.closest(
          'svg, .katex, script, style, pre, textarea, option, select, annotation, [hidden], .visually-hidden',
        )
      )
        continue;
      const text = node.textContent;
      if (!/\S{4,}/.test(text)) continue;
      const block =
        parent.closest('p, li, td, th, div, label, figcaption, span, summary, h1, h2, h3, dd, dt') ?? parent;
      for (const match of text.matchAll(/[^\s\-/·–—,]{4,}/g)) {
        range.setStart(node, match.index);
        range.setEnd(node, match.index + match[0].length);
        const lines = [...range.getClientRects()].filter((r) => r.width > 0);
        if (lines.length < 2) continue;
        const tops = new Set(lines.map((r) => Math.round(r.top)));
        if (tops.size < 2) continue;
        const width = lines.reduce((sum, r) => sum + r.width, 0);
        if (width <= block.clientWidth)
          findings.push(`mid-word: "${match[0].slice(0, 40)}" breaks across lines in ${describe(block)}`);
      }
    }
  }
  return [...new Set(findings)];
}
