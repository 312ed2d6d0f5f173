import { Controller, Get, Inject } from '@nestjs/common';
import { WithoutTenant } from '../common/nest';
import type { OpenApiDocument } from './openapi-document';
import { OPENAPI_DOCUMENT } from './openapi.module-definition';

/** `GET /openapi.json`: the document of the routes this app mounts. No API key. */
@Controller()
@WithoutTenant()
export class OpenApiController {
  constructor(@Inject(OPENAPI_DOCUMENT) private readonly document: OpenApiDocument) {}

  @Get('openapi.json')
  read(): OpenApiDocument {
    return this.document;
  }
}
