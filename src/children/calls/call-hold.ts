// A call's place in its child's line, given back while the call waits on its client and taken again after.

/** What one admission a call passed lets it do with its place there. */
export interface CallHold {
  /** Gives the place back; the call holds nothing here until `reacquire` resolves. */
  release(): void;
  /** Waits its turn for the place again, behind the calls already waiting. */
  reacquire(): Promise<void>;
}

/**
 * Runs `work` holding what `admit` grants (it resolves with the function that gives it back, which must be
 * safe to call more than once), and registers in `holds` how a paused call gives it back and takes it again.
 */
export async function holding<T>(admit: () => Promise<() => void>, holds: CallHold[], work: () => Promise<T>): Promise<T> {
  let leave = await admit();
  holds.push({
    release: () => leave(),
    reacquire: async () => {
      leave = await admit();
    },
  });
  try {
    return await work();
  } finally {
    leave();
  }
}
