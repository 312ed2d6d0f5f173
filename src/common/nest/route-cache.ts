import type { ExecutionContext } from '@nestjs/common';

// eslint-disable-next-line @typescript-eslint/no-unsafe-function-type -- Nest hands out handlers and classes as Function
export type RouteTarget = Function;

/**
 * A value worked out once per route (controller class, then handler) and kept, for code on
 * every request's path: reading route metadata through the Reflector each time costs more than
 * the rest of a guard. Keyed by class too, since controllers that inherit one method may differ.
 */
export class RouteCache<T> {
  private readonly byController = new WeakMap<object, WeakMap<object, T>>();

  constructor(private readonly compute: (handler: RouteTarget, controller: RouteTarget) => T) {}

  get(context: ExecutionContext): T {
    const handler = context.getHandler();
    const controller = context.getClass();
    let byHandler = this.byController.get(controller);
    if (!byHandler) {
      byHandler = new WeakMap();
      this.byController.set(controller, byHandler);
    }
    if (byHandler.has(handler)) return byHandler.get(handler) as T;
    const value = this.compute(handler, controller);
    byHandler.set(handler, value);
    return value;
  }
}
