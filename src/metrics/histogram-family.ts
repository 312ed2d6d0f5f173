import type { Metric, MetricValueWithName, Registry } from 'prom-client';

/** One label set's histogram: plain numbers, updated on the hot path without allocating. */
export class HistogramSeries {
  count = 0;
  sum = 0;
  /** Observations per bucket (not cumulative); the last slot is +Inf. */
  readonly buckets: Float64Array;

  constructor(
    readonly labels: Readonly<Record<string, string>>,
    private readonly bounds: readonly number[],
  ) {
    this.buckets = new Float64Array(bounds.length + 1);
  }

  observe(value: number): void {
    let index = 0;
    while (index < this.bounds.length && value > this.bounds[index]) index++;
    this.buckets[index]++;
    this.count++;
    this.sum += value;
  }
}

/**
 * A histogram family that prom-client renders only when Prometheus scrapes. prom-client's own
 * Histogram hashes its labels on every observation; on the call path that cost about a sixth
 * of the throughput of a tool call, so series are looked up once and then only counted.
 */
export class HistogramFamily {
  private readonly series: HistogramSeries[] = [];

  constructor(
    readonly name: string,
    readonly help: string,
    private readonly bounds: readonly number[],
  ) {}

  /** A new series for these labels; callers keep it and observe into it. */
  add(labels: Record<string, string>): HistogramSeries {
    const series = new HistogramSeries(labels, this.bounds);
    this.series.push(series);
    return series;
  }

  all(): readonly HistogramSeries[] {
    return this.series;
  }

  register(registry: Registry): void {
    registry.registerMetric(this.asMetric());
  }

  private asMetric(): Metric {
    const metric = {
      name: this.name,
      help: this.help,
      type: 'histogram',
      aggregator: 'sum',
      get: async () => ({
        name: this.name,
        help: this.help,
        type: 'histogram',
        aggregator: 'sum',
        values: this.series.flatMap((series) => this.render(series)),
      }),
      reset: () => undefined,
    };
    return metric as unknown as Metric;
  }

  private render(series: HistogramSeries): Array<MetricValueWithName<string>> {
    const values: Array<MetricValueWithName<string>> = [];
    let cumulative = 0;
    this.bounds.forEach((bound, index) => {
      cumulative += series.buckets[index];
      values.push({ metricName: `${this.name}_bucket`, labels: { le: bound, ...series.labels }, value: cumulative });
    });
    values.push({ metricName: `${this.name}_bucket`, labels: { le: '+Inf', ...series.labels }, value: series.count });
    values.push({ metricName: `${this.name}_sum`, labels: series.labels, value: series.sum });
    values.push({ metricName: `${this.name}_count`, labels: series.labels, value: series.count });
    return values;
  }
}
