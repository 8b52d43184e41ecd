package dev.fence.core;

/** The caller's input is malformed (a bad name, duration, option or hook input line). Nothing was written. */
public class InvalidInputException extends FenceException {
    private static final long serialVersionUID = 1L;

    public InvalidInputException(String message) {
        super(message);
    }
}
