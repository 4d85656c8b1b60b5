/**
 * Asking for what the command line left out — only when someone can answer: a terminal on both
 * ends and not CI. Elsewhere a missing flag is an error that names it.
 */

/** Whether to prompt for missing flags. */
export function interactive(): boolean {
  return Boolean(process.stdin.isTTY && process.stdout.isTTY) && !process.env.CI;
}

/** The value of a flag: given, else asked (in a terminal), else an error naming the flag. */
export async function required(
  value: string | undefined,
  flag: string,
  question: string,
  options: { placeholder?: string; initial?: string; validate?: (v: string) => unknown } = {},
): Promise<string> {
  if (value !== undefined && value !== '') return value;
  if (!interactive()) throw new Error(`${flag} is required`);
  const clack = await import('@clack/prompts');
  const answer = await clack.text({
    message: question,
    ...(options.placeholder !== undefined && { placeholder: options.placeholder }),
    ...(options.initial !== undefined && { initialValue: options.initial }),
    validate: (v) => {
      if (!v) return `${flag} is required`;
      try {
        options.validate?.(v);
        return undefined;
      } catch (err) {
        return err instanceof Error ? err.message : String(err);
      }
    },
  });
  if (clack.isCancel(answer)) throw new Error('cancelled');
  return answer;
}

/** A yes/no flag: given, else asked (in a terminal), else its default. */
export async function confirm(
  value: boolean | undefined,
  question: string,
  initial: boolean,
): Promise<boolean> {
  if (value !== undefined) return value;
  if (!interactive()) return initial;
  const clack = await import('@clack/prompts');
  const answer = await clack.confirm({ message: question, initialValue: initial });
  if (clack.isCancel(answer)) throw new Error('cancelled');
  return answer;
}

/** Several of `options`, asked in a terminal (at least one must be chosen). */
export async function choose<T extends string>(
  question: string,
  options: ReadonlyArray<{ value: T; label: string }>,
): Promise<T[]> {
  const clack = await import('@clack/prompts');
  const answer = await clack.multiselect<T>({
    message: question,
    options: options.map((o) => ({ value: o.value, label: o.label })) as never,
    required: true,
  });
  if (clack.isCancel(answer)) throw new Error('cancelled');
  return answer as T[];
}
