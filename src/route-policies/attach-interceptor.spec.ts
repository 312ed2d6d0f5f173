import { type CallHandler, type ExecutionContext, type NestInterceptor, UseInterceptors } from '@nestjs/common';
import { INTERCEPTORS_METADATA } from '@nestjs/common/constants';
import type { Observable } from 'rxjs';
import { attachInterceptorOnce } from './attach-interceptor';

class Ours implements NestInterceptor {
  intercept(_context: ExecutionContext, next: CallHandler): Observable<unknown> {
    return next.handle();
  }
}

class Other implements NestInterceptor {
  intercept(_context: ExecutionContext, next: CallHandler): Observable<unknown> {
    return next.handle();
  }
}

/** A decorator for classes and methods that attaches `Ours`, as `@Bulkhead` does. */
function AttachOurs(): ClassDecorator & MethodDecorator {
  return ((target: object, _key?: string | symbol, descriptor?: TypedPropertyDescriptor<unknown>) =>
    attachInterceptorOnce(Ours, target, descriptor)) as ClassDecorator & MethodDecorator;
}

const interceptorsOf = (holder: object): unknown[] | undefined => Reflect.getMetadata(INTERCEPTORS_METADATA, holder);

describe('attachInterceptorOnce', () => {
  it('attaches the interceptor to a decorated method only', () => {
    class Subject {
      @AttachOurs()
      decorated() {}

      plain() {}
    }
    expect(interceptorsOf(Subject.prototype.decorated)).toEqual([Ours]);
    expect(interceptorsOf(Subject.prototype.plain)).toBeUndefined();
    expect(interceptorsOf(Subject)).toBeUndefined();
  });

  it('attaches the interceptor to a decorated class and leaves its methods alone', () => {
    @AttachOurs()
    class Subject {
      first() {}

      second() {}
    }
    expect(interceptorsOf(Subject)).toEqual([Ours]);
    expect(interceptorsOf(Subject.prototype.first)).toBeUndefined();
    expect(interceptorsOf(Subject.prototype.second)).toBeUndefined();
  });

  it('keeps the interceptor on the class only when both the class and a method are decorated', () => {
    @AttachOurs()
    class Subject {
      @AttachOurs()
      both() {}

      classOnly() {}
    }
    expect(interceptorsOf(Subject)).toEqual([Ours]);
    expect(interceptorsOf(Subject.prototype.both)).toEqual([]);
    expect(interceptorsOf(Subject.prototype.classOnly)).toBeUndefined();
  });

  it('attaches it once when the same method or class is decorated twice', () => {
    @AttachOurs()
    @AttachOurs()
    class Subject {
      @AttachOurs()
      @AttachOurs()
      twice() {}
    }
    expect(interceptorsOf(Subject)).toEqual([Ours]);
    expect(interceptorsOf(Subject.prototype.twice)).toEqual([]);

    class MethodsOnly {
      @AttachOurs()
      @AttachOurs()
      twice() {}
    }
    expect(interceptorsOf(MethodsOnly.prototype.twice)).toEqual([Ours]);
  });

  it('leaves other interceptors of a method in place and in order', () => {
    @AttachOurs()
    class Subject {
      @UseInterceptors(Other)
      @AttachOurs()
      ownFirst() {}

      @AttachOurs()
      @UseInterceptors(Other)
      otherFirst() {}

      @UseInterceptors(Other)
      otherOnly() {}
    }
    expect(interceptorsOf(Subject.prototype.ownFirst)).toEqual([Other]);
    expect(interceptorsOf(Subject.prototype.otherFirst)).toEqual([Other]);
    expect(interceptorsOf(Subject.prototype.otherOnly)).toEqual([Other]);
  });

  it('adds after the interceptors a method or class already has', () => {
    @AttachOurs()
    @UseInterceptors(Other)
    class Subject {
      @AttachOurs()
      @UseInterceptors(Other)
      method() {}
    }
    expect(interceptorsOf(Subject)).toEqual([Other, Ours]);

    class MethodsOnly {
      @AttachOurs()
      @UseInterceptors(Other)
      method() {}
    }
    expect(interceptorsOf(MethodsOnly.prototype.method)).toEqual([Other, Ours]);
  });

  it('leaves class-level interceptors of other kinds alone', () => {
    @UseInterceptors(Other)
    @AttachOurs()
    class Subject {
      method() {}
    }
    expect(interceptorsOf(Subject)).toEqual([Ours, Other]);
  });

  it('does not read the accessors of a decorated class', () => {
    const decorate = () => {
      @AttachOurs()
      class Subject {
        @AttachOurs()
        method() {}

        get value(): number {
          throw new Error('an accessor was read');
        }
      }
      return Subject;
    };
    expect(decorate).not.toThrow();
    const Subject = decorate();
    expect(interceptorsOf(Subject)).toEqual([Ours]);
    expect(interceptorsOf(Subject.prototype.method)).toEqual([]);
  });
});
