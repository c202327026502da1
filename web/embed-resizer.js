// Optional, for pages that embed tally's embed.html in an <iframe> and allow this one script: fits each
// tally iframe to its content's height, which the frame posts as {type: 'tally-embed-height', height}.
// Without it the iframe keeps its height attribute and the widget scrolls inside it.
addEventListener('message', (event) => {
  if (event.data?.type !== 'tally-embed-height' || !Number.isFinite(event.data.height)) return;
  for (const frame of document.querySelectorAll('iframe')) {
    if (frame.contentWindow === event.source)
      frame.style.height = `${Math.min(Math.max(event.data.height, 80), 20000)}px`;
  }
});
