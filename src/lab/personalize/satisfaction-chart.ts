/**
 * The chart `--out` writes: the served version's probe satisfaction rate against sessions, one
 * step line per result (the rate holds from one probe to the next, as in `sessionsToSuccess`),
 * the success threshold dashed. Plain SVG text with no dependencies, so any browser shows it.
 */
import { chartFrame, escapeXml, round } from '../../rollouts/chart-frame.js';
import { successThreshold, type PersonalizeMethod, type PersonalizeResult } from './personalize-result.js';

const width = 880;
const height = 420;
const margin = { left: 56, right: 330, top: 40, bottom: 48 };
const plotWidth = width - margin.left - margin.right;
const plotHeight = height - margin.top - margin.bottom;

const methodColors: { readonly [M in PersonalizeMethod]: string } = { rl: '#d62728', opd: '#1f77b4', combine: '#2ca02c', base: '#7f7f7f' };
const dashPatterns = ['', '6 3', '2 3', '8 3 2 3'];

/** The step line's points: each probe's rate from its session to the next probe (or the end of the run). */
export function probeStepPoints(result: Pick<PersonalizeResult, 'probe' | 'sessions'>): Array<[number, number]> {
  const probes = [...result.probe].sort((left, right) => left.afterSession - right.afterSession);
  const end = Math.max(result.sessions.length, probes[probes.length - 1]?.afterSession ?? 0);
  const points: Array<[number, number]> = [];
  probes.forEach((probe, index) => {
    const until = probes[index + 1]?.afterSession ?? end;
    points.push([probe.afterSession, probe.satisfactionRate], [until, probe.satisfactionRate]);
  });
  return points;
}

export function labelOf(result: Pick<PersonalizeResult, 'method' | 'user' | 'seed' | 'sessionsToSuccess'>): string {
  const success = result.sessionsToSuccess === null ? 'never' : `≥${successThreshold} from ${result.sessionsToSuccess}`;
  return `${result.method} · ${result.user} · seed ${result.seed} (${success})`;
}


export function satisfactionChart(results: readonly PersonalizeResult[]): string {
  const maximumSessions = Math.max(1, ...results.map((result) => Math.max(result.sessions.length, ...result.probe.map((probe) => probe.afterSession))));
  const x = (session: number) => margin.left + (session / maximumSessions) * plotWidth;
  // A little room inside the frame, so lines at 0 and 1 do not hide under it.
  const y = (rate: number) => margin.top + 6 + (1 - rate) * (plotHeight - 12);
  const parts = chartFrame({
    width, height, margin, plotWidth, plotHeight, x, y, maximumX: maximumSessions,
    title: 'Probe satisfaction rate of the served policy (held-out first messages)',
  });
  parts.push(
    `<line x1="${margin.left}" x2="${margin.left + plotWidth}" y1="${round(y(successThreshold))}" y2="${round(y(successThreshold))}" stroke="#555" stroke-dasharray="4 4"/>`,
    `<rect x="${margin.left}" y="${margin.top}" width="${plotWidth}" height="${plotHeight}" fill="none" stroke="#333"/>`,
    `<text x="${margin.left + plotWidth / 2}" y="${height - 10}" text-anchor="middle">sessions</text>`,
    `<text transform="translate(16 ${margin.top + plotHeight / 2}) rotate(-90)" text-anchor="middle">satisfaction rate</text>`,
  );
  const seenPerMethod = new Map<PersonalizeMethod, number>();
  results.forEach((result, index) => {
    const repeat = seenPerMethod.get(result.method) ?? 0;
    seenPerMethod.set(result.method, repeat + 1);
    const color = methodColors[result.method];
    const dash = dashPatterns[repeat % dashPatterns.length] ?? '';
    const points = probeStepPoints(result).map(([session, rate]) => `${round(x(session))},${round(y(rate))}`).join(' ');
    const dashAttribute = dash === '' ? '' : ` stroke-dasharray="${dash}"`;
    parts.push(`<polyline fill="none" stroke="${color}" stroke-width="2"${dashAttribute} points="${points}"><title>${escapeXml(labelOf(result))}</title></polyline>`);
    const legendY = margin.top + 8 + index * 18;
    const legendX = margin.left + plotWidth + 12;
    parts.push(
      `<line x1="${legendX}" x2="${legendX + 22}" y1="${legendY}" y2="${legendY}" stroke="${color}" stroke-width="2"${dashAttribute}/>`,
      `<text x="${legendX + 28}" y="${legendY + 4}" font-size="11">${escapeXml(labelOf(result))}</text>`,
    );
  });
  parts.push('</svg>');
  return `${parts.join('\n')}\n`;
}
