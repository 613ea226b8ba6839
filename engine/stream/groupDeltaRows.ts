// The rows one group matched in one batch, rendered once per wire format and odds
// format for every delta message of the group (and, on its own, for a catch-up's rows).
import type { OddsEngine } from '../engine.ts';
import { jsonRowsBuffer, rowsMsgpack, type WireFormat } from './streamMessages.ts';

/**
 * Per batch and group: the changed rows rendered once per (wire format, odds format).
 * The fan-out keeps one and resets it for each group (no objects per group and batch);
 * a JSON delta is written straight into its message's buffer from the engine's rendered
 * fragments, so the rows are copied once, into the frame itself.
 */
export class GroupDeltaRows {
  private readonly json: (Buffer | undefined)[] = [];
  private readonly msgpack: (Buffer | undefined)[] = [];
  /** JSON byte length of the rows by odds format code (-1: not measured yet). */
  private readonly jsonLength: number[] = [];

  constructor(
    private readonly engine: OddsEngine,
    private slots: Int32Array,
    private count: number,
  ) {}

  /** Starts over on other rows (the group's matched rows of this batch). */
  reset(slots: Int32Array, count: number): void {
    this.slots = slots;
    this.count = count;
    this.json.length = 0;
    this.msgpack.length = 0;
    this.jsonLength.length = 0;
  }

  get(format: WireFormat, code: number): Buffer {
    let json = this.json[code];
    if (json === undefined) this.json[code] = json = this.engine.fragments.join(this.slots, this.count, code);
    if (format === 'json') return json;
    let packed = this.msgpack[code];
    if (packed === undefined) this.msgpack[code] = packed = rowsMsgpack(json);
    return packed;
  }

  /** The JSON message `headText` + these rows + `]}` (the same bytes as rowsMessage('json', ...)). */
  jsonMessage(headText: string, code: number): Buffer {
    const joined = this.json[code];
    if (joined !== undefined) {
      const out = jsonRowsBuffer(headText, joined.length);
      joined.copy(out, out.length - joined.length - 2);
      return out;
    }
    let length = this.jsonLength[code];
    if (length === undefined) this.jsonLength[code] = length = this.count === 0 ? 0 : this.engine.fragments.joinedLength(this.slots, this.count, code);
    const out = jsonRowsBuffer(headText, length);
    if (this.count > 0) this.engine.fragments.joinInto(this.slots, this.count, code, out, out.length - length - 2);
    return out;
  }
}
