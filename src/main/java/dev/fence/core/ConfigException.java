package dev.fence.core;

/** fence is configured wrongly (store URL, configuration file, environment). The message names the key. */
public class ConfigException extends FenceException {
    private static final long serialVersionUID = 1L;

    public ConfigException(String message) {
        super(message);
    }

    public ConfigException(String message, Throwable cause) {
        super(message, cause);
    }
}
