/**
 * Role matching: the one rule used everywhere an agent is looked up by role.
 * Roles match when they are equal after trimming, ignoring case, so
 * "researcher", " Researcher " and "RESEARCHER" are the same agent.
 *
 * @since 0.1.0
 */
import { ValidationError } from "./EnsembleError.ts"
import { show } from "./internal/rules.ts"

/**
 * The form two roles are compared in. What is not a string (from
 * JavaScript) throws `ValidationError`.
 *
 * @example
 * ```ts
 * import { Role } from "loopwork/ensemble"
 *
 * Role.key("  Researcher ") // "researcher"
 * ```
 *
 * @category utils
 * @since 0.1.0
 */
export const key = (role: string): string => {
  if (typeof role !== "string") throw new ValidationError({ message: `A role must be a string (got ${show(role)})` })
  return role.trim().toLowerCase()
}

/**
 * Whether two roles name the same agent.
 *
 * @example
 * ```ts
 * import { Role } from "loopwork/ensemble"
 *
 * Role.same("researcher", "Researcher") // true
 * ```
 *
 * @category utils
 * @since 0.1.0
 */
export const same = (a: string, b: string): boolean => key(a) === key(b)
