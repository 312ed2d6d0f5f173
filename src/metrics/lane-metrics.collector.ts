import { Inject, Injectable, type OnModuleDestroy, type OnModuleInit, Optional } from '@nestjs/common';
import { Counter, Gauge, type Registry } from 'prom-client';
import { type Lane, LaneRegistry, PRIORITY_CLASSES } from '../bulkhead';
import { HistogramFamily } from './histogram-family';
import { METRIC, QUEUE_WAIT_BUCKETS } from './metric-names';
import { MetricsRegistry } from './metrics-registry.provider';

/**
 * The lane metrics. Gauges and counters are read from the lanes when Prometheus scrapes, so
 * admission does no metric work at all; only the queue-wait histogram is fed per call, with
 * two additions and a bucket search.
 */
@Injectable()
export class LaneMetricsCollector implements OnModuleInit, OnModuleDestroy {
  private readonly disposers: Array<() => void> = [];

  constructor(
    @Optional() @Inject(LaneRegistry) private readonly lanes: LaneRegistry | null,
    private readonly registry: MetricsRegistry,
  ) {}

  onModuleInit(): void {
    if (!this.lanes) return;
    const lanes = [...this.lanes.all()];
    const registers: Registry[] = [this.registry];
    gauge(METRIC.laneActive, 'Calls running in the lane now', registers, lanes, (lane) => lane.running);
    gauge(METRIC.laneWaiting, 'Calls waiting in the lane queue now', registers, lanes, (lane) => lane.waiting);
    new Gauge({
      name: METRIC.laneWaitingByClass,
      help: 'Calls waiting in the lane queue now, by priority class (a higher class starts first)',
      labelNames: ['lane', 'class'],
      registers,
      collect() {
        for (const lane of lanes) {
          const { waitingByClass } = lane.snapshot();
          for (const priority of PRIORITY_CLASSES)
            this.set({ lane: lane.name, class: priority }, waitingByClass[priority]);
        }
      },
    });
    gauge(
      METRIC.lanePeakActive,
      'Most calls ever seen running at once',
      registers,
      lanes,
      (lane) => lane.snapshot().peakActive,
    );
    new Gauge({
      name: METRIC.laneCapacity,
      help: 'Configured lane capacity: concurrency (C) and queue (Q)',
      labelNames: ['lane', 'kind'],
      registers,
      collect() {
        for (const lane of lanes) {
          this.set({ lane: lane.name, kind: 'concurrency' }, lane.concurrency);
          this.set({ lane: lane.name, kind: 'queue' }, lane.queueCapacity);
        }
      },
    });
    new Gauge({
      name: METRIC.laneLimit,
      help: 'What the lane allows now: running (concurrency) and waiting (queue) calls; an adaptive lane moves them',
      labelNames: ['lane', 'kind'],
      registers,
      collect() {
        for (const lane of lanes) {
          this.set({ lane: lane.name, kind: 'concurrency' }, lane.currentLimit);
          this.set({ lane: lane.name, kind: 'queue' }, lane.currentQueueLimit);
        }
      },
    });
    new Counter({
      name: METRIC.admissions,
      help: 'Admission decisions by result',
      labelNames: ['lane', 'result'],
      registers,
      collect() {
        this.reset();
        for (const lane of lanes) {
          const stats = lane.stats();
          this.inc({ lane: lane.name, result: 'accepted' }, stats.accepted);
          this.inc({ lane: lane.name, result: 'queue_full' }, stats.queueFull);
          this.inc({ lane: lane.name, result: 'tenant_queue_full' }, stats.tenantQueueFull);
          this.inc({ lane: lane.name, result: 'stopped' }, stats.stopped);
          // Accepted first, then refused queue_full while waiting: a higher class took its place.
          this.inc({ lane: lane.name, result: 'displaced' }, stats.displaced);
        }
      },
    });
    new Counter({
      name: METRIC.cancellations,
      help: 'Calls whose caller went away, by where the call was',
      labelNames: ['lane', 'stage'],
      registers,
      collect() {
        this.reset();
        for (const lane of lanes) {
          const stats = lane.stats();
          this.inc({ lane: lane.name, stage: 'queued' }, stats.cancelledQueued);
          this.inc({ lane: lane.name, stage: 'running' }, stats.cancelledRunning);
        }
      },
    });
    const queueWait = new HistogramFamily(
      METRIC.queueWait,
      'Time calls waited for a lane slot (0 when one was free)',
      QUEUE_WAIT_BUCKETS,
    );
    queueWait.register(this.registry);
    for (const lane of lanes) {
      const series = queueWait.add({ lane: lane.name });
      this.disposers.push(lane.onQueueWait((waitMs) => series.observe(waitMs / 1000)));
    }
  }

  onModuleDestroy(): void {
    for (const dispose of this.disposers) dispose();
  }
}

function gauge(name: string, help: string, registers: Registry[], lanes: Lane[], read: (lane: Lane) => number): void {
  new Gauge({
    name,
    help,
    labelNames: ['lane'],
    registers,
    collect() {
      for (const lane of lanes) this.set({ lane: lane.name }, read(lane));
    },
  });
}
