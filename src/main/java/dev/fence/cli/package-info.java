/**
 * The command line: one class per subcommand ({@code FooCommand}), each parsing its options, calling one
 * service of another package and mapping the outcome to an {@link dev.fence.cli.ExitCode}; the option
 * mixins they share; the exit codes each command declares ({@code ExitCodes}) and the one place that maps
 * failures to them ({@code Failures}); and {@link dev.fence.cli.Main}, the entry point and the only class
 * that touches the process (its streams, environment, clock and exit). The hook's fast path and the
 * archive training run still live here, on their way to a package of their own.
 *
 * <p>The outermost layer: may depend on every other fence package and on picocli (the only package that
 * does); nothing else in fence may depend on it. Commands receive the outside world as a {@link
 * dev.fence.cli.Context}.
 */
package dev.fence.cli;
