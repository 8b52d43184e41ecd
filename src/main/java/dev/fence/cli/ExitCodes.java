package dev.fence.cli;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * The exit codes one command can return: the one place that says so for that command. {@link Cli} renders
 * the list in the command's {@code --help}, in this order and with each code's {@link ExitCode#description()};
 * every command class carries one (a test walks the tree).
 *
 * <p>Every command can return {@link ExitCode#OK} ({@code --help} at least) and {@link ExitCode#USAGE} (a
 * bad option); every command that does anything can also return {@link ExitCode#INTERNAL}.
 */
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.TYPE)
@interface ExitCodes {
    /** The codes, lowest first. */
    ExitCode[] value();

    /**
     * When not empty, the command also exits with a status that is not fence's own (the command {@code fence
     * exec} ran): this text describes it, listed after the codes.
     */
    String otherwise() default "";
}
