// Response-cache validity from several inputs (a data version, the UTC day, where a
// time window falls among event starts): a token that moves exactly when one of them
// differs from the last call. Packing the inputs into one number arithmetically would
// overflow; comparing them costs four number comparisons and no allocation. Tokens
// come from one process-wide counter, so a memo built to replace another (a plan
// rebuilt when the UTC day turns) can never hand out a token an old entry holds.
let issued = 0;

export class TokenMemo {
  private a = Number.NaN;
  private b = Number.NaN;
  private c = Number.NaN;
  private d = Number.NaN;
  private token = 0;

  of(a: number, b = 0, c = 0, d = 0): number {
    if (a !== this.a || b !== this.b || c !== this.c || d !== this.d) {
      this.a = a;
      this.b = b;
      this.c = c;
      this.d = d;
      this.token = ++issued;
    }
    return this.token;
  }
}
