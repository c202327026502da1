// Optional, for pages that embed tally's embed.html in an <iframe> and allow this one script: fits each
// tally iframe to its content's height, which the frame posts as {type: 'tally-embed-height', height}.
// Without it the iframe keeps its height attribute and the widget scrolls inside it.
//
// Only tally embeds are resized, and only by themselves: a message counts when its event.source is the window of
// an iframe whose src is the embed page (embed.html beside this script; any …/embed.html where this script is
// bundled and cannot tell where it came from) and its event.origin is that src's origin. Any other frame posting
// the same message (an ad, another site's widget, a tally frame navigated elsewhere) is ignored.
(() => {
  const script = document.currentScript;
  const embedPage = script?.src ? new URL('embed.html', script.src) : null;

  /** The origin of `frame`'s src when it is a tally embed page, else null. */
  function embedOrigin(frame) {
    let src;
    try {
      src = new URL(frame.src, document.baseURI);
    } catch {
      return null;
    }
    if (src.protocol !== 'https:' && src.protocol !== 'http:') return null;
    const isEmbed = embedPage
      ? src.origin === embedPage.origin && src.pathname === embedPage.pathname
      : /\/embed\.html$/.test(src.pathname);
    return isEmbed ? src.origin : null;
  }

  addEventListener('message', (event) => {
    if (event.data?.type !== 'tally-embed-height' || !Number.isFinite(event.data.height)) return;
    if (event.source === null || event.origin === 'null') return;
    for (const frame of document.querySelectorAll('iframe')) {
      if (frame.contentWindow !== event.source) continue;
      if (embedOrigin(frame) === event.origin)
        frame.style.height = `${Math.min(Math.max(event.data.height, 80), 20000)}px`;
      return;
    }
  });
})();
