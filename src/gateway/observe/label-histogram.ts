// A Prometheus histogram whose label sets are kept as series made once: an observation adds to its series' counts
// and hashes no label set, where prom-client's Histogram checks and hashes the labels on every observation.
import type { Metric, Registry, RegistryContentType } from "prom-client";

/** One label set's observations: its counts per bucket (not cumulative; summed when scraped), sum and count. */
export class HistogramSeries {
  private readonly counts: Float64Array;
  sum = 0;
  count = 0;

  constructor(
    readonly labels: Readonly<Record<string, string>>,
    private readonly bounds: readonly number[],
  ) {
    this.counts = new Float64Array(bounds.length);
  }

  observe(value: number): void {
    if (!Number.isFinite(value)) throw new TypeError(`Value is not a valid number: ${value}`);
    const { bounds } = this;
    for (let i = 0; i < bounds.length; i++) {
      if (value <= bounds[i]!) {
        this.counts[i]!++;
        break;
      }
    }
    this.sum += value;
    this.count++;
  }

  /** How many observations were at most each bound, in the bounds' order. */
  cumulative(): number[] {
    let total = 0;
    return Array.from(this.counts, (count) => (total += count));
  }
}

/** A value of the metric as prom-client's registry reads it: `labels` its own, `sharedLabels` the series'. */
interface ValuePair {
  labels: Record<string, string | number>;
  sharedLabels: Readonly<Record<string, string>>;
  value: number;
  metricName: string;
  exemplar: null | undefined;
}

/** One level of a histogram's series, found by a label's value: the next level, or at the last, the series. */
type SeriesLevel = Map<string | undefined, SeriesLevel | HistogramSeries>;

/**
 * A histogram that prom-client's Registry serves as it serves its own Histogram, with the same text (pinned by
 * test/gateway/observe/label-histogram.test.ts against prom-client's). Its series are found by the label values the
 * caller gives, one level of maps per value (no key is built and hashed per observation), and made from the
 * caller's labels only the first time.
 */
export class LabelHistogram {
  readonly type = "histogram";
  readonly aggregator = "sum";
  private readonly levels: SeriesLevel = new Map();
  /** Every series, in the order first seen. */
  private readonly series: HistogramSeries[] = [];

  constructor(
    readonly name: string,
    readonly help: string,
    private readonly bounds: readonly number[],
    registry: Registry<RegistryContentType>,
  ) {
    registry.registerMetric(this as unknown as Metric);
  }

  /**
   * The series of these label values (as many, in the same order, on every call: undefined for a label a call
   * does not have), made with `labels()` the first time they are seen together.
   */
  seriesOf(values: readonly (string | undefined)[], labels: () => Readonly<Record<string, string>>): HistogramSeries {
    let level = this.levels;
    const last = values.length - 1;
    for (let i = 0; i < last; i++) {
      let next = level.get(values[i]) as SeriesLevel | undefined;
      if (!next) level.set(values[i], (next = new Map()));
      level = next;
    }
    let series = level.get(values[last]) as HistogramSeries | undefined;
    if (!series) {
      level.set(values[last], (series = new HistogramSeries(labels(), this.bounds)));
      this.series.push(series);
    }
    return series;
  }

  reset(): void {
    this.levels.clear();
    this.series.length = 0;
  }

  /** What the registry writes as text: each series' buckets, then +Inf, sum and count, series in the order first seen. */
  getForPromString(): Promise<{ name: string; help: string; type: string; values: ValuePair[]; aggregator: string }> {
    const bucket = `${this.name}_bucket`;
    const values: ValuePair[] = [];
    for (const series of this.series) {
      const shared = series.labels;
      series
        .cumulative()
        .forEach((value, i) => values.push({ labels: { le: this.bounds[i]! }, sharedLabels: shared, value, metricName: bucket, exemplar: null }));
      values.push(
        { labels: { le: "+Inf" }, sharedLabels: shared, value: series.count, metricName: bucket, exemplar: null },
        { labels: {}, sharedLabels: shared, value: series.sum, metricName: `${this.name}_sum`, exemplar: undefined },
        { labels: {}, sharedLabels: shared, value: series.count, metricName: `${this.name}_count`, exemplar: undefined },
      );
    }
    return Promise.resolve({ name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator });
  }

  /** As the registry's JSON reads it: each value's labels with the series' own merged in. */
  async get(): Promise<{ name: string; help: string; type: string; values: Array<Omit<ValuePair, "sharedLabels">>; aggregator: string }> {
    const data = await this.getForPromString();
    return {
      ...data,
      values: data.values.map(({ sharedLabels, labels, ...rest }) => ({ ...rest, labels: { ...labels, ...sharedLabels } })),
    };
  }
}
