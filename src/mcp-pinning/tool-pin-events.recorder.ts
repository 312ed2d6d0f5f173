import { Injectable, Logger, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { logRecord } from '../common';
import { EventLedger } from '../events';
import type { ToolPinEvent } from './tool-pin';
import { ToolPins } from './tool-pins';

/**
 * Puts what happens to tool pins in the event ledger and the log: `toolId` the tool, `status`
 * `tool_<kind>` (`tool_changed`, `tool_approved`, ...), seen by those who may call the tool; one
 * log line each (`event: tool_pin`), a change and a store that cannot be asked at `warn`. Hashes
 * only: never a definition (an upstream's words are no log line's) nor anything of the config.
 */
@Injectable()
export class ToolPinEventsRecorder implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger('Bulkhead');
  private dispose: (() => void) | undefined;

  constructor(
    private readonly pins: ToolPins,
    private readonly ledger: EventLedger,
  ) {}

  onModuleInit(): void {
    this.dispose = this.pins.onEvent((event) => {
      this.ledger.record('', event.tool, '', '', `tool_${event.kind}`, undefined, event.audience);
      const line = logRecord({
        msg: message(event),
        event: 'tool_pin',
        tool: event.tool,
        pin: event.kind,
        pinning: event.mode,
        sha256: event.sha256,
        approvedSha256: event.approvedSha256,
      });
      if (event.kind === 'changed' || event.kind === 'unchecked') this.logger.warn(line);
      else this.logger.log(line);
    });
  }

  onApplicationShutdown(): void {
    this.dispose?.();
    this.pins.close();
  }
}

function message(event: ToolPinEvent): string {
  switch (event.kind) {
    case 'pinned':
      return `MCP tool ${event.tool} pinned at ${event.sha256}`;
    case 'changed':
      return event.mode === 'enforce'
        ? `MCP tool ${event.tool} changed its definition (${event.sha256}, approved ${event.approvedSha256}): quarantined until approved`
        : `MCP tool ${event.tool} changed its definition (${event.sha256}, approved ${event.approvedSha256}): still served (pinning: warn)`;
    case 'approved':
      return `MCP tool ${event.tool}: definition ${event.sha256} approved`;
    case 'restored':
      return `MCP tool ${event.tool} lists its approved definition ${event.sha256} again`;
    case 'unchecked':
      return `MCP tool ${event.tool}: the pin store could not be asked; served unchecked until it answers`;
  }
}
