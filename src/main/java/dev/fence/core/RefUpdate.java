package dev.fence.core;

/**
 * One line of a pre-receive hook's input: {@code <old> <new> <ref>}.
 *
 * @param oldId the ref's current id (all zeros when the push creates the ref)
 * @param newId the pushed id (all zeros when the push deletes the ref)
 * @param ref the full ref name
 */
public record RefUpdate(String oldId, String newId, String ref) {
    /** What an update does to its ref. */
    public enum Kind {
        CREATE,
        UPDATE,
        DELETE,
        /** old = new: a no-op line. */
        NONE
    }

    public Kind kind() {
        boolean oldZero = ObjectIds.isZero(oldId);
        boolean newZero = ObjectIds.isZero(newId);
        if (oldZero && newZero) {
            return Kind.NONE;
        } else if (oldZero) {
            return Kind.CREATE;
        } else if (newZero) {
            return Kind.DELETE;
        }
        return oldId.equals(newId) ? Kind.NONE : Kind.UPDATE;
    }
}
