/**
 * The chart `--out` writes beside the results: held-out accuracy against steps (the base at step
 * 0), one line per result file in the folder, and each run's step reward as a thin dotted line of
 * the same colour. Plain SVG, like the personalization chart.
 */
import { chartFrame, escapeXml, round } from './chart-frame.js';
import type { RolloutResult } from './rollout-result.js';

const width = 880;
const height = 420;
const margin = { left: 56, right: 330, top: 40, bottom: 48 };
const plotWidth = width - margin.left - margin.right;
const plotHeight = height - margin.top - margin.bottom;
const colors = ['#1f77b4', '#d62728', '#2ca02c', '#9467bd', '#ff7f0e', '#8c564b', '#17becf', '#7f7f7f'];

export function rolloutLabel(result: RolloutResult): string {
  return `${result.env} · ${result.rewardMode} · seed ${result.seed} (${result.baseAccuracy.toFixed(2)} → ${result.finalAccuracy.toFixed(2)})`;
}

/** Accuracy points: the base at step 0, then every measured step. */
export function accuracyPoints(result: RolloutResult): Array<[number, number]> {
  return [[0, result.baseAccuracy], ...result.steps.flatMap((step): Array<[number, number]> => (step.accuracy === null ? [] : [[step.step, step.accuracy]]))];
}

export function rolloutChart(results: readonly RolloutResult[]): string {
  const maximumStep = Math.max(1, ...results.map((result) => result.steps.length));
  const x = (step: number) => margin.left + (step / maximumStep) * plotWidth;
  const y = (value: number) => margin.top + 6 + (1 - Math.max(0, Math.min(1, value))) * (plotHeight - 12);
  const parts = chartFrame({
    width, height, margin, plotWidth, plotHeight, x, y, maximumX: maximumStep,
    title: 'Held-out accuracy (solid) and step reward (dotted) of group rollouts',
  });
  parts.push(
    `<rect x="${margin.left}" y="${margin.top}" width="${plotWidth}" height="${plotHeight}" fill="none" stroke="#333"/>`,
    `<text x="${margin.left + plotWidth / 2}" y="${height - 10}" text-anchor="middle">training steps</text>`,
  );
  results.forEach((result, index) => {
    const color = colors[index % colors.length] ?? '#333';
    const accuracy = accuracyPoints(result).map(([at, value]) => `${round(x(at))},${round(y(value))}`).join(' ');
    const reward = result.steps.map((entry) => `${round(x(entry.step))},${round(y(entry.reward))}`).join(' ');
    const label = escapeXml(rolloutLabel(result));
    parts.push(`<polyline fill="none" stroke="${color}" stroke-width="2" points="${accuracy}"><title>${label}</title></polyline>`);
    if (reward !== '') parts.push(`<polyline fill="none" stroke="${color}" stroke-width="1" stroke-dasharray="2 3" points="${reward}"/>`);
    const legendY = margin.top + 8 + index * 18;
    const legendX = margin.left + plotWidth + 12;
    parts.push(
      `<line x1="${legendX}" x2="${legendX + 22}" y1="${legendY}" y2="${legendY}" stroke="${color}" stroke-width="2"/>`,
      `<text x="${legendX + 28}" y="${legendY + 4}" font-size="11">${label}</text>`,
    );
  });
  parts.push('</svg>');
  return `${parts.join('\n')}\n`;
}
