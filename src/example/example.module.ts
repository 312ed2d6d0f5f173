import { Module } from '@nestjs/common';
import { ReportsController } from './reports.controller';

/** Mounted when the config says `examples: true` (lanes `render` and `general` needed). */
@Module({ controllers: [ReportsController] })
export class ExampleModule {}
