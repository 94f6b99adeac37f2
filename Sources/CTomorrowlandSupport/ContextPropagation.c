#include "CTomorrowlandSupport.h"

uint32_t twl_context_propagation = 0;
