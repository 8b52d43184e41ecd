package dev.fence.cli;

import java.lang.reflect.Constructor;
import picocli.CommandLine;

/** Builds command objects, giving each the {@link Context} when it has a constructor that takes one. */
final class CommandFactory implements CommandLine.IFactory {
    private final Context context;
    private final CommandLine.IFactory fallback = CommandLine.defaultFactory();

    CommandFactory(Context context) {
        this.context = context;
    }

    @Override
    public <K> K create(Class<K> cls) throws Exception {
        try {
            Constructor<K> c = cls.getDeclaredConstructor(Context.class);
            c.setAccessible(true);
            return c.newInstance(context);
        } catch (NoSuchMethodException e) {
            return fallback.create(cls);
        }
    }
}
