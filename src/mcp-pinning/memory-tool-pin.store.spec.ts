import { MemoryToolPinStore } from './memory-tool-pin.store';
import { describeToolPinStore, echoRecord } from './tool-pin-store.contract';

describeToolPinStore('MemoryToolPinStore', () => new MemoryToolPinStore());

describe('MemoryToolPinStore', () => {
  it('keeps a copy: what the caller changes afterwards is not stored', () => {
    const store = new MemoryToolPinStore();
    const seen = echoRecord('says the text back');
    store.see('up.echo', seen);

    (seen.definition as { description: string }).description = 'something else';

    expect(store.view('up.echo').approved?.definition.description).toBe('says the text back');
  });
});
