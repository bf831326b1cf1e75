/** A uPlot line chart; new data redraws it in place, so a live chart keeps its zoom and size. */
import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { axisTicks, type TickFormat } from './chart-ticks.js';

export interface ChartLine {
  label: string;
  color: string;
  /** Drawn as steps (a version, a rate that holds until the next probe). */
  stepped?: boolean;
  dashed?: boolean;
}

export interface LineChartProps {
  title: string;
  lines: ChartLine[];
  /** x first, then one array per line; nulls are gaps. */
  data: (number | null)[][];
  /** `time`: x in epoch seconds; otherwise a plain number axis named `xLabel`. */
  xKind?: 'time' | 'number';
  xLabel?: string;
  yRange?: [number, number];
  /** The x axis's extent (a live chart's window), rather than the data's: one point alone spans years otherwise. */
  xRange?: [number, number];
  xTicks?: TickFormat;
  yTicks?: TickFormat;
  width?: number;
  height?: number;
}

export function LineChart(props: LineChartProps) {
  const container = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);
  // Read by the scale on every redraw, so a moving window moves without re-creating the chart.
  const xRange = useRef(props.xRange);
  xRange.current = props.xRange;
  const shape = JSON.stringify([props.lines, props.xKind, props.xLabel, props.yRange, props.xTicks, props.yTicks]);

  useEffect(() => {
    if (container.current === null) return undefined;
    const range = props.yRange;
    const options: uPlot.Options = {
      width: props.width ?? 560,
      height: props.height ?? 220,
      scales: {
        x: {
          time: props.xKind !== 'number',
          range: (_plot, minimum, maximum) => xRange.current ?? (minimum === maximum ? [minimum - 1, maximum + 1] : [minimum, maximum]),
        },
        ...(range === undefined ? {} : { y: { range: () => range } }),
      },
      axes: [{ label: props.xKind === 'number' ? (props.xLabel ?? '') : undefined, ...axisTicks(props.xTicks) }, axisTicks(props.yTicks)],
      series: [
        {},
        ...props.lines.map((line) => ({
          label: line.label,
          stroke: line.color,
          width: 2,
          points: { show: true, size: 4 },
          ...(line.stepped === true ? { paths: uPlot.paths.stepped?.({ align: 1 }) } : {}),
          ...(line.dashed === true ? { dash: [6, 4] } : {}),
        })),
      ],
    };
    plot.current = new uPlot(options, props.data as uPlot.AlignedData, container.current);
    return () => {
      plot.current?.destroy();
      plot.current = null;
    };
  }, [shape]);

  useEffect(() => {
    plot.current?.setData(props.data as uPlot.AlignedData);
  }, [props.data]);

  return (
    <figure class="chart" data-chart={props.title}>
      <figcaption>{props.title}</figcaption>
      <div ref={container} />
    </figure>
  );
}
