/** The first piece of 4+ characters of `secret` found in `output`, or undefined when none is. */
export function leakedPiece(output: string, secret: string): string | undefined {
  for (let i = 0; i + 4 <= secret.length; i += 1) {
    const piece = secret.slice(i, i + 4);
    if (output.includes(piece)) return piece;
  }
  return undefined;
}
