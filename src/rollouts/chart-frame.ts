/**
 * The frame the result charts share (the rollout driver's and the personalization experiment's): the
 * white page, the title, the 0–1 grid with its labels and the x-axis ticks, as plain SVG text. It lives
 * with the rollouts, which the lab may import and which may not import the lab.
 */
export function escapeXml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

export function round(value: number): string {
  return String(Math.round(value * 10) / 10);
}

/** A tick step of 1, 2 or 5 times a power of ten giving at most about 10 ticks. */
function tickStep(maximum: number): number {
  const rough = Math.max(1, maximum / 10);
  const power = 10 ** Math.floor(Math.log10(rough));
  return ([1, 2, 5, 10].map((factor) => factor * power).find((step) => step >= rough) ?? 10 * power);
}

/** The frame both charts share: the white page, the title, the 0–1 grid with its labels and the x-axis ticks. */
export function chartFrame(options: {
  width: number;
  height: number;
  margin: { left: number; top: number };
  plotWidth: number;
  plotHeight: number;
  title: string;
  maximumX: number;
  x: (value: number) => number;
  y: (value: number) => number;
}): string[] {
  const { width, height, margin, plotWidth, plotHeight, x, y } = options;
  const parts = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="12">`,
    `<rect width="${width}" height="${height}" fill="white"/>`,
    `<text x="${margin.left}" y="22" font-size="14">${escapeXml(options.title)}</text>`,
  ];
  for (let tick = 0; tick <= 5; tick += 1) {
    const value = tick / 5;
    parts.push(
      `<line x1="${margin.left}" x2="${margin.left + plotWidth}" y1="${round(y(value))}" y2="${round(y(value))}" stroke="#e5e5e5"/>`,
      `<text x="${margin.left - 8}" y="${round(y(value) + 4)}" text-anchor="end">${value.toFixed(1)}</text>`,
    );
  }
  const step = tickStep(options.maximumX);
  for (let tick = 0; tick <= options.maximumX; tick += step) {
    parts.push(`<text x="${round(x(tick))}" y="${margin.top + plotHeight + 18}" text-anchor="middle">${tick}</text>`);
  }
  return parts;
}
