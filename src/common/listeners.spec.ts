import { Listeners } from './listeners';

describe('Listeners', () => {
  it('calls each listener in the order added, until it is removed or all are cleared', () => {
    const heard: string[] = [];
    const listeners = new Listeners<[word: string]>();
    const removeA = listeners.add((word) => heard.push(`a:${word}`));
    listeners.add((word) => heard.push(`b:${word}`));
    listeners.emit('one');
    removeA();
    listeners.emit('two');
    listeners.clear();
    listeners.emit('three');
    expect(heard).toEqual(['a:one', 'b:one', 'b:two']);
  });

  it('skips no listener when one removes itself while an event is emitted', () => {
    const heard: string[] = [];
    const listeners = new Listeners<[]>();
    const removeFirst = listeners.add(() => {
      heard.push('first');
      removeFirst();
    });
    listeners.add(() => heard.push('second'));
    listeners.emit();
    listeners.emit();
    expect(heard).toEqual(['first', 'second', 'second']);
  });
});
