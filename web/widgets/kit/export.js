// Copy and download: the clipboard, a Blob as a file, and a chart's SVG made standalone or rasterized to PNG.

/** Copies text to the clipboard; resolves true on success. */
export async function copyText(text) {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    const area = document.createElement('textarea');
    area.value = text;
    area.setAttribute('readonly', '');
    area.style.position = 'fixed';
    area.style.opacity = '0';
    document.body.append(area);
    area.select();
    let ok = false;
    try {
      ok = document.execCommand('copy');
    } catch {
      ok = false;
    }
    area.remove();
    return ok;
  }
}

/** Offers a Blob as a download named `filename`. */
export function downloadBlob(filename, blob) {
  const url = URL.createObjectURL(blob);
  const link = document.createElement('a');
  link.href = url;
  link.download = filename;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

/**
 * Serializes an <svg> for download with the colours resolved (a standalone file has no page CSS):
 * every element's computed fill, stroke and font are inlined. Returns the SVG text.
 */
export function standaloneSvg(svg) {
  const clone = svg.cloneNode(true);
  const source = [svg, ...svg.querySelectorAll('*')];
  const target = [clone, ...clone.querySelectorAll('*')];
  source.forEach((el, i) => {
    const cs = getComputedStyle(el);
    const style = [
      'fill',
      'stroke',
      'stroke-width',
      'stroke-dasharray',
      'opacity',
      'font-size',
      'font-family',
      'font-weight',
      'text-anchor',
      'dominant-baseline',
    ]
      .map((p) => `${p}:${cs.getPropertyValue(p)}`)
      .join(';');
    target[i].setAttribute('style', style);
  });
  clone.setAttribute('xmlns', 'http://www.w3.org/2000/svg');
  const box = svg.viewBox.baseVal;
  if (box && box.width) {
    clone.setAttribute('width', box.width);
    clone.setAttribute('height', box.height);
  }
  return new XMLSerializer().serializeToString(clone);
}

/** Rasterizes SVG text to a PNG Blob at `scale` times its size, on the given background colour. */
export function svgToPng(svgText, width, height, scale = 2, background = '#ffffff') {
  return new Promise((resolve, reject) => {
    const image = new Image();
    image.onload = () => {
      const canvas = document.createElement('canvas');
      canvas.width = Math.round(width * scale);
      canvas.height = Math.round(height * scale);
      const ctx = canvas.getContext('2d');
      ctx.fillStyle = background;
      ctx.fillRect(0, 0, canvas.width, canvas.height);
      ctx.drawImage(image, 0, 0, canvas.width, canvas.height);
      canvas.toBlob((blob) => (blob ? resolve(blob) : reject(new Error('PNG encoding failed'))), 'image/png');
    };
    image.onerror = () => reject(new Error('the chart could not be rasterized'));
    image.src = `data:image/svg+xml;charset=utf-8,${encodeURIComponent(svgText)}`;
  });
}
