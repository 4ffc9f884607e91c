/* bridge/object_array.h: Python-bodied functions behind the object array entry points
 * (a rectangle travels as uint32_t[4], as in bridge/image.h). */
uintptr_t vxnn_create_object_array(const char *fn, uintptr_t context, uintptr_t exemplar, size_t count);
uintptr_t vxnn_create_image_object_array_from_tensor(const char *fn, uintptr_t tensor, const uint32_t *rect, size_t count, size_t jump, uint32_t format);
uintptr_t vxnn_get_object_array_item(const char *fn, uintptr_t array, uint32_t index);
