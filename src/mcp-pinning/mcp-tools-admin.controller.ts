import { Body, Controller, Get, HttpCode, Param, Post, UseGuards } from '@nestjs/common';
import { z } from 'zod';
import { AdminGuard } from '../auth';
import { NAME_PATTERN, ResilienceError } from '../common';
import { WithoutTenant } from '../common/nest';
import { SHA256_HEX } from './tool-definition-hash';
import { type PinApprovalAnswer, type PinStatus, ToolPins } from './tool-pins';

/** The body of `POST /v1/admin/mcp/tools/{name}/approve`: the hash the operator approves, if it names one. */
export const approveBodyObjectSchema = z.strictObject({
  sha256: z
    .string()
    .regex(SHA256_HEX)
    .optional()
    .meta({ description: 'Approve only if the definition waiting has this hash (64 lowercase hex digits).' }),
});

/** No body, `null`, or {@link approveBodyObjectSchema}. */
export const approveBodySchema = approveBodyObjectSchema.nullish();

const APPROVE_RULE = 'the body must be empty or { "sha256": 64 lowercase hex digits }';

/** For operators: an upstream MCP tool's pin, and approving its new definition (admin token). */
@Controller('v1/admin/mcp/tools')
@WithoutTenant()
@UseGuards(AdminGuard)
export class McpToolsAdminController {
  constructor(private readonly pins: ToolPins) {}

  /** The tool's approved and waiting definitions, and what differs between them. */
  @Get(':name')
  status(@Param('name') name: string): Promise<PinStatus> {
    return this.pins.status(checkName(name));
  }

  /** Approves the definition waiting: every replica serves the tool with it from its next check. */
  @Post(':name/approve')
  @HttpCode(200)
  approve(@Param('name') name: string, @Body() body: unknown): Promise<PinApprovalAnswer> {
    checkName(name);
    const parsed = approveBodySchema.safeParse(body);
    if (!parsed.success) throw new ResilienceError('invalid_request', APPROVE_RULE);
    return this.pins.approve(name, parsed.data?.sha256);
  }
}

function checkName(name: string): string {
  if (!NAME_PATTERN.test(name)) throw new ResilienceError('invalid_request', 'not a tool name');
  return name;
}
