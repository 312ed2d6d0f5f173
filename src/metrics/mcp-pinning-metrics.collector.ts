import { Inject, Injectable, type OnModuleDestroy, type OnModuleInit, Optional } from '@nestjs/common';
import { Counter } from 'prom-client';
import { ToolPins } from '../mcp-pinning';
import { METRIC } from './metric-names';
import { MetricsRegistry } from './metrics-registry.provider';

/**
 * Upstream MCP tools whose definition changed from the approved one, by tool and pinning mode
 * (`enforce`: quarantined; `warn`: still served). Counted once per new definition per replica,
 * however often it is listed; every pinned tool's series starts at zero.
 */
@Injectable()
export class McpPinningMetricsCollector implements OnModuleInit, OnModuleDestroy {
  private dispose: (() => void) | undefined;

  constructor(
    @Optional() @Inject(ToolPins) private readonly pins: ToolPins | null,
    private readonly registry: MetricsRegistry,
  ) {}

  onModuleInit(): void {
    const pins = this.pins;
    if (!pins) return;
    const changes = new Counter({
      name: METRIC.mcpToolChanges,
      help: 'Upstream MCP tool definitions that differ from the approved one, by tool and pinning (enforce quarantines, warn serves)',
      labelNames: ['tool', 'pinning'],
      registers: [this.registry],
      collect() {
        for (const pin of pins.all()) this.inc({ tool: pin.tool, pinning: pin.settings.mode }, 0);
      },
    });
    this.dispose = pins.onEvent((event) => {
      if (event.kind === 'changed') changes.inc({ tool: event.tool, pinning: event.mode });
    });
  }

  onModuleDestroy(): void {
    this.dispose?.();
  }
}
