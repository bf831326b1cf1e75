/**
 * An object that answers some methods itself and forwards every other member to `target`, bound
 * to it (class-based stores keep private fields, so their methods must run on themselves). How a
 * cross-cutting wrapper (redaction) decorates a seam without knowing all its members.
 */
export function overrideMethods<Target extends object>(target: Target, overrides: Partial<Target>): Target {
  return new Proxy(target, {
    get(object, property, receiver) {
      if (Object.hasOwn(overrides, property)) return overrides[property as keyof Target];
      const value: unknown = Reflect.get(object, property, receiver);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(object) : value;
    },
  });
}
