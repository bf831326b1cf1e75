/**
 * The `ExperimentCharts` seam: results of `clawrl eval personalize` and `clawrl rollout` runs found
 * under a results folder (`--results-dir`), as the charts those commands draw. The dashboard's
 * Experiments page shows them; `src/lab/create-experiment-charts-reader.ts` reads the files.
 */

/** One line of a chart: y per x, null where the run measured nothing. */
export interface ExperimentLine {
  label: string;
  points: [number, number | null][];
}

export interface ExperimentChart {
  /** `personalize` or `rollout`. */
  kind: string;
  title: string;
  xLabel: string;
  yLabel: string;
  /** A dashed reference level (the success threshold of personalization); null when none. */
  threshold: number | null;
  lines: ExperimentLine[];
  /** One row per run: what its summary table says. */
  rows: Record<string, string | number | null>[];
}

export interface ExperimentCharts {
  /** The results folder, as the dashboard names it. */
  readonly folder: string;
  /** Reads the folder anew on every call, so runs finishing meanwhile show up. */
  list(): Promise<ExperimentChart[]>;
}
